import ClickHouseStore
import Logging
import Privacy
import ProcessMemory
import ServiceLifecycle
import StoreCore
import Systemd
import TelemetryStore
import UnixSignals

extension Daemon {
    /// What the daemon adds to the router the tests build: the journal mirror, failed
    /// enrollment calls digested into the journal (one entry per app, code and minute, with
    /// app and device ids as a reader without `pii` sees them), the journal and disk
    /// readiness checks, and `READY=1` once the port is bound (``serverRunning(notifier:components:logger:)``).
    static func applicationHooks(components: DaemonComponents, mirror: JournalMirror, world: OutsideWorld, logger: Logger)
        -> ApplicationHooks
    {
        var hooks = ApplicationHooks()
        hooks.mirror = JournalLogMirror(mirror: mirror, pseudonymizer: components.pseudonymizer)
        let visibility = RecordVisibility(piiAllowed: false, pseudonymizer: components.pseudonymizer)
        let failures = EnrollmentFailureDigest(visible: visibility.clientString)
        hooks.enrollmentFailures = failures
        hooks.services = [mirror, EnrollmentFailureDigestService(digest: failures, mirror: mirror, clock: world.clock)]
        hooks.readinessChecks = [
            ReadinessCheck(name: "journal", required: false) { (mirror.status.reachable, mirror.status.summary) },
            ReadinessCheck(name: "disk", required: true) {
                components.disk.refusal().map { (false, $0) } ?? (true, "\(components.disk.status.freeBytes) bytes free")
            },
        ]
        hooks.onServerRunning = serverRunning(notifier: world.notifier, components: components, logger: logger)
        return hooks
    }

    /// The HTTP application: served on the listener systemd passed (socket activation,
    /// `LISTEN_FDS`/`LISTEN_PID`; see SocketActivation/) or else bound to `--listen`.
    static func httpApplication(components: DaemonComponents, hooks: ApplicationHooks, logger: Logger) throws -> any Service {
        guard let (listener, ignored) = try SocketActivation.inheritedListener() else {
            return buildApplication(components: components, hooks: hooks, logger: logger)
        }
        if !ignored.isEmpty {
            logger.warning("socket activation: serving on the first socket only", metadata: ["ignored": "\(ignored)"])
        }
        return buildSocketActivatedApplication(listener: listener, components: components, hooks: hooks, logger: logger)
    }

    /// Every service the daemon runs until SIGTERM/SIGINT. Order matters: the group stops
    /// services last-to-first. The stop notifier goes first (STOPPING=1 at once), then the
    /// HTTP application drains (server, then committer and mirror inside it), and the watchdog
    /// keeps pinging until the end.
    static func serviceGroup(
        app: any Service, components: DaemonComponents, mirror: JournalMirror, world: OutsideWorld, logLevel: LogLevelControl,
        arguments: [String], logger: Logger
    ) -> ServiceGroup {
        let notifier = world.notifier
        let status = StatusLine(
            commitQueue: components.commitQueue, disk: components.disk, mirror: mirror, clock: components.clock,
            forwarder: components.forwarder?.status)
        let watchdog = WatchdogService(
            notifier: notifier, logger: logger,
            livenessProbe: { components.commitQueue.isHealthy() },
            statusText: { status.text() })
        return ServiceGroup(
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
    }

    /// The exit code for a failed start or run, logged as critical. A newer ClickHouse schema
    /// and a missing or unreadable pseudonym key carry their own: never a made-up key, which
    /// would silently change every pseudonym and journal hash.
    static func exitCode(for error: any Error, logger: Logger) -> Int32 {
        switch error {
        case let error as ClickHouseSchemaError:
            logger.critical("\(error.description)")
            return error.exitCode
        case let error as PseudonymKeyError:
            logger.critical("\(error.description)")
            return error.exitCode
        default:
            logger.critical("mamtelemetryd failed", metadata: ["error": "\(error)"])
            return 1
        }
    }
}
