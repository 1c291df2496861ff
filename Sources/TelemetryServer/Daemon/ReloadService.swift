import ControlState
import Foundation
import Logging
import ServiceLifecycle
import StoreCore
import Synchronization
import Systemd
import TelemetryStore
import UnixSignals

/// SIGHUP (`systemctl reload`): re-reads the configuration file, the token table and the
/// app registry without dropping a connection. A configuration that fails to load is
/// refused with a clear log line and the one in force stays. What can change safely while
/// running is put in force at once (``ConfigurationKey/OnReload/applied``: retention, disk
/// thresholds, log level, kill switch, per-token rate, metrics token, journal, app lists)
/// and a retention pass follows; every other changed key is named in the log line and in
/// `STATUS=` as needing a restart, until the daemon runs with it.
final class ReloadService: Service, Sendable {
    let arguments: [String]
    let components: DaemonComponents
    let mirror: JournalMirror
    let notifier: SystemdNotifier
    let logLevel: LogLevelControl
    let status: StatusLine
    let logger: Logger
    /// The configuration whose reloadable part is in force (the last one loaded).
    private let inForce: Mutex<ServerConfiguration>

    init(
        arguments: [String], components: DaemonComponents, mirror: JournalMirror, notifier: SystemdNotifier,
        logLevel: LogLevelControl, status: StatusLine, logger: Logger
    ) {
        self.arguments = arguments
        self.components = components
        self.mirror = mirror
        self.notifier = notifier
        self.logLevel = logLevel
        self.status = status
        self.logger = logger
        inForce = Mutex(components.configuration)
    }

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            if await reload() {
                await components.actOnReloadedSettings(logger: logger)
            }
        }
    }

    /// Reloads; returns whether the new configuration was taken.
    @discardableResult
    func reload() async -> Bool {
        _ = notifier.reloading()
        let fresh: ServerConfiguration
        do {
            fresh = try await ConfigurationLoader.load(arguments: arguments)
        } catch {
            logger.error(
                "reload refused: the configuration in force is kept",
                metadata: .messageID(.configReloaded, ["error": "\(error)", "result": "refused"]))
            _ = notifier.ready(status: status.text())
            return false
        }
        let previous = inForce.withLock { old in
            defer { old = fresh }
            return old
        }
        let applied = ConfigurationKey.changed(from: previous, to: fresh).filter { $0.onReload == .applied }.map(\.name)
        // Restart-only keys are compared with what the daemon started with: they stay listed
        // until a restart, and drop off if the file is put back.
        let needsRestart = ConfigurationKey.changed(from: components.configuration, to: fresh)
            .filter { $0.onReload == .needsRestart }.map(\.name)

        components.settings.apply(fresh)
        if let level = Logger.Level(rawValue: fresh.logLevel) { logLevel.level = level }
        components.registry.setConfigured(fresh.configuredApps)
        mirror.apply(JournalMirrorConfiguration(fresh))
        var tokens = "tokens"
        do {
            try components.tokens.reload()
        } catch {
            tokens = "none (the token table could not be re-read)"
            logger.error("reload: the token table could not be re-read", metadata: ["error": "\(error)"])
        }
        status.needsRestart = needsRestart
        let summary =
            "configuration reloaded; applied: \(applied.isEmpty ? "no changed keys" : applied.joined(separator: ", "))"
            + (needsRestart.isEmpty ? "" : "; needs a restart to apply: \(needsRestart.joined(separator: ", "))")
        logger.notice(
            "\(summary)",
            metadata: .messageID(
                .configReloaded,
                [
                    "result": "applied", "applied": "\(applied.joined(separator: ","))",
                    "needs_restart": "\(needsRestart.joined(separator: ","))", "reread": "app registry, \(tokens)",
                ]))
        _ = notifier.ready(status: status.text())
        return true
    }
}
