import Foundation
import Logging
import NIOCore
import ProcessMemory
import ServiceLifecycle
import Systemd

/// The daemon's life: load configuration, open the store, run the HTTP server and its
/// services until SIGTERM/SIGINT, then drain. Returns the process exit code.
///
/// Each step is a function of its own (DaemonStartup.swift, DaemonServices.swift); their
/// order is the contract: the process is set up before anything allocates in earnest, the
/// store is open before the server binds, and `READY=1` goes out only once it has.
public enum Daemon {
    public static func run(arguments: [String] = CommandLine.arguments) async -> Int32 {
        if let exitCode = InformationalCommand(arguments: arguments)?.perform() { return exitCode }
        if let layout = StoreLayoutCommand(arguments: arguments) { return await layout.perform() }
        guard let configuration = await loadConfiguration(arguments: arguments) else { return ExitCode.configuration }
        let (logger, logLevel) = prepareProcess(configuration)
        do {
            let world = OutsideWorld(logger: logger)
            let components = try openComponents(configuration, world: world, logger: logger)
            try await connectClickHouse(components, logger: logger)
            try await createFirstAdminTokenIfNeeded(components, logger: logger)
            let mirror = JournalMirror(
                configuration: JournalMirrorConfiguration(configuration), logger: logger, metricsFactory: world.metrics.factory,
                clock: world.clock)
            let hooks = applicationHooks(components: components, mirror: mirror, world: world, logger: logger)
            let app = try httpApplication(components: components, hooks: hooks, logger: logger)
            let group = serviceGroup(
                app: app, components: components, mirror: mirror, world: world, logLevel: logLevel, arguments: arguments,
                logger: logger)
            try await group.run()
            logger.notice("mamtelemetryd stopped", metadata: .messageID(.stopped))
            return 0
        } catch {
            return exitCode(for: error, logger: logger)
        }
    }
}

extension Daemon {
    /// Runs once the server listens: `READY=1` only now (the store is open and the port is
    /// bound), cold start-up pages released, and the `started` journal entry, which is
    /// logged from this file (its `CODE_FILE`, as the `stopped` one's).
    static func serverRunning(notifier: SystemdNotifier, components: DaemonComponents, logger: Logger)
        -> @Sendable (any Channel) async -> Void
    {
        let dataDirectory = components.configuration.dataDirectory.path
        return { channel in
            _ = notifier.ready(status: "listening on \(channel.localAddress?.description ?? "?")")
            // Start-up is over: what only it touched need not stay resident.
            ColdPages.release()
            logger.notice(
                "mamtelemetryd started",
                metadata: .messageID(
                    .started, ["listen": "\(channel.localAddress?.description ?? "?")", "dataDir": "\(dataDirectory)"]))
        }
    }
}

public enum DaemonVersion {
    public static let current = "0.1.0"
}
