import Bundles
import ClickHouseStore
import Foundation
import Hummingbird
import Logging
import Privacy
import ProcessMemory
import ServiceLifecycle
import Systemd
import TelemetryModel
import TelemetryStore

/// The daemon's life: load configuration, open the store, run the HTTP server and its
/// services until SIGTERM/SIGINT, then drain. Returns the process exit code.
public enum Daemon {
    public static func run(arguments: [String] = CommandLine.arguments) async -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(ConfigurationManual.usage)
            return 0
        }
        if arguments.contains("--version") {
            print("mamtelemetryd \(DaemonVersion.current)")
            return 0
        }
        if let flag = arguments.firstIndex(of: "--generate-completion-script") {
            let shell = arguments.indices.contains(flag + 1) ? arguments[flag + 1] : ""
            guard let script = CompletionScript.script(for: shell) else {
                FileHandle.standardError.write(
                    Data("mamtelemetryd: --generate-completion-script takes \(CompletionScript.shells.joined(separator: ", "))\n".utf8))
                return 64  // EX_USAGE
            }
            print(script, terminator: "")
            return 0
        }
        let configuration: ServerConfiguration
        do {
            configuration = try await ConfigurationLoader.load(arguments: arguments)
        } catch {
            FileHandle.standardError.write(Data("mamtelemetryd: \(error)\n".utf8))
            return 78  // EX_CONFIG
        }
        // One level for every logger, changed in place by `systemctl reload`.
        let logLevel = LogLevelControl(Logger.Level(rawValue: configuration.logLevel) ?? .info)
        DaemonLogging.bootstrap(identifier: "mamtelemetryd", levelControl: logLevel)
        let logger = Logger(label: "mamtelemetryd")
        HeapPolicy.configure()
        // Whatever the daemon or a library it uses creates is the daemon's alone, whatever
        // umask it was started with (`PrivateFiles` sets the modes of its own files anyway).
        umask(0o077)
        do {
            // The outside world, made once and passed to everything that reads it.
            let clock = SystemWallClock()
            let metrics = PrometheusMetrics()
            let crashHook = CrashAtCommitPoint(environment: ProcessInfo.processInfo.environment)
            if let crashHook {
                logger.warning(
                    "test hook armed: the daemon will SIGKILL itself",
                    metadata: ["\(CrashAtCommitPoint.variable)": "\(crashHook.point.rawValue)"])
            }
            let notifier = SystemdNotifier()
            let components = try DaemonComponents(
                configuration: configuration, clock: clock, metrics: metrics, space: StatvfsFilesystemSpace(),
                commitFaults: crashHook ?? NoCommitFaults(), logger: logger
            ) { what, bytes in
                // A rewrite of a large database outlasts TimeoutStartSec=: ask for time at
                // a pessimistic 20 MB/s, so systemd does not kill it halfway, again and again.
                _ = notifier.extendTimeout(by: .seconds(60 + bytes / 20_000_000))
                logger.notice("\(what): \(bytes) bytes, start-up takes longer this once")
            }
            if let forwarder = components.forwarder {
                // A newer schema stops the start (exit 65); an unreachable ClickHouse does not:
                // the collector spools and the forwarder migrates once it gets through.
                do {
                    try await ClickHouseMigrator(client: forwarder.client).migrate()
                } catch let error as ClickHouseError {
                    logger.warning("ClickHouse is not reachable at start; spooling until it is", metadata: ["error": "\(error)"])
                }
            }
            if let path = try await components.createFirstAdminTokenIfNeeded() {
                logger.notice("no tokens were configured: created an admin token", metadata: ["path": "\(path.path)"])
            }
            let mirror = JournalMirror(
                configuration: JournalMirrorConfiguration(configuration), logger: logger, metricsFactory: metrics.factory, clock: clock)
            var hooks = ApplicationHooks()
            hooks.mirror = JournalLogMirror(mirror: mirror, pseudonymizer: components.pseudonymizer)
            // Failed enrollment calls reach the journal as one entry per app, code and minute,
            // with app and device ids as a reader without `pii` sees them.
            let visibility = RecordVisibility(piiAllowed: false, pseudonymizer: components.pseudonymizer)
            let failures = EnrollmentFailureDigest(visible: visibility.clientString)
            hooks.enrollmentFailures = failures
            hooks.services = [mirror, EnrollmentFailureDigestService(digest: failures, mirror: mirror, clock: clock)]
            hooks.readinessChecks = [
                ReadinessCheck(name: "journal", required: false) { (mirror.status.reachable, mirror.status.summary) },
                ReadinessCheck(name: "disk", required: true) {
                    components.disk.refusal().map { (false, $0) } ?? (true, "\(components.disk.status.freeBytes) bytes free")
                },
            ]
            hooks.onServerRunning = { channel in
                // READY=1 only now: the store is open (components) and the port is bound.
                _ = notifier.ready(status: "listening on \(channel.localAddress?.description ?? "?")")
                // Start-up is over: what only it touched need not stay resident.
                ColdPages.release()
                logger.notice(
                    "mamtelemetryd started",
                    metadata: .messageID(
                        .started,
                        [
                            "listen": "\(channel.localAddress?.description ?? "?")",
                            "dataDir": "\(configuration.dataDirectory.path)",
                        ]))
            }
            // Socket activation: serve on the listener systemd passed
            // (LISTEN_FDS/LISTEN_PID) instead of binding --listen; otherwise unchanged.
            // See Systemd/SocketActivation*.swift.
            let app: any Service
            if let (listener, ignored) = try SocketActivation.inheritedListener() {
                if !ignored.isEmpty {
                    logger.warning("socket activation: serving on the first socket only", metadata: ["ignored": "\(ignored)"])
                }
                app = buildSocketActivatedApplication(listener: listener, components: components, hooks: hooks, logger: logger)
            } else {
                app = buildApplication(components: components, hooks: hooks, logger: logger)
            }
            let status = StatusLine(
                commitQueue: components.commitQueue, disk: components.disk, mirror: mirror, clock: components.clock,
                forwarder: components.forwarder?.status)
            let watchdog = WatchdogService(
                notifier: notifier, logger: logger,
                livenessProbe: { components.commitQueue.isHealthy() },
                statusText: { status.text() })
            // Order matters: the group stops services last-to-first. The stop notifier goes
            // first (STOPPING=1 at once), then the HTTP application drains (server, then
            // committer and mirror inside it), and the watchdog keeps pinging until the end.
            let group = ServiceGroup(
                configuration: .init(
                    services: [
                        .init(service: watchdog),
                        .init(service: HeapTrimService()),
                        .init(service: app),
                        .init(
                            service: ReloadService(
                                arguments: arguments, components: components, mirror: mirror, notifier: notifier,
                                logLevel: logLevel, status: status, logger: logger)),
                        .init(service: StopNotifierService(notifier: notifier, logger: logger)),
                    ],
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger))
            try await group.run()
            logger.notice("mamtelemetryd stopped", metadata: .messageID(.stopped))
            return 0
        } catch let error as ClickHouseSchemaError {
            logger.critical("\(error.description)")
            return error.exitCode
        } catch let error as PseudonymKeyError {
            // Never a made-up key: that would silently change every pseudonym and journal hash.
            logger.critical("\(error.description)")
            return error.exitCode
        } catch {
            logger.critical("mamtelemetryd failed", metadata: ["error": "\(error)"])
            return 1
        }
    }
}

public enum DaemonVersion {
    public static let current = "0.1.0"
}
