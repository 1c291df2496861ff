import ClickHouseStore
import Foundation
import Logging
import ProcessMemory
import StoreCore
import Systemd
import TelemetryModel
import TelemetryStore

/// What the daemon reads from the world outside it, made once and passed to everything that
/// reads it (tests pass their own instead).
struct OutsideWorld {
    let clock: any WallClock
    let metrics: PrometheusMetrics
    /// The crash test hook, when `CrashAtCommitPoint.variable` arms it.
    let crashHook: CrashAtCommitPoint?
    let notifier: SystemdNotifier

    init(logger: Logger) {
        clock = SystemWallClock()
        metrics = PrometheusMetrics()
        crashHook = CrashAtCommitPoint(environment: ProcessInfo.processInfo.environment)
        if let crashHook {
            logger.warning(
                "test hook armed: the daemon will SIGKILL itself",
                metadata: ["\(CrashAtCommitPoint.variable)": "\(crashHook.point.rawValue)"])
        }
        notifier = SystemdNotifier()
    }
}

extension Daemon {
    /// The configuration from flags, environment and file; nil (after saying why on stderr)
    /// when it does not load, as logging is not set up yet.
    static func loadConfiguration(arguments: [String]) async -> ServerConfiguration? {
        do {
            return try await ConfigurationLoader.load(arguments: arguments)
        } catch {
            FileHandle.standardError.write(Data("mamtelemetryd: \(error)\n".utf8))
            return nil
        }
    }

    /// Sets up the process before anything else runs: logging (one level for every logger,
    /// changed in place by `systemctl reload`), the heap policy (before the services start
    /// their threads) and the umask.
    static func prepareProcess(_ configuration: ServerConfiguration) -> (Logger, LogLevelControl) {
        let logLevel = LogLevelControl(Logger.Level(rawValue: configuration.logLevel) ?? .info)
        DaemonLogging.bootstrap(identifier: "mamtelemetryd", levelControl: logLevel)
        let logger = Logger(label: "mamtelemetryd")
        HeapPolicy.configure()
        // Whatever the daemon or a library it uses creates is the daemon's alone, whatever
        // umask it was started with (`PrivateFiles` sets the modes of its own files anyway).
        umask(0o077)
        return (logger, logLevel)
    }

    /// Opens the store and everything built on it. A rewrite of a large database outlasts
    /// `TimeoutStartSec=`: it asks systemd for time at a pessimistic 20 MB/s, so systemd does
    /// not kill it halfway, again and again.
    static func openComponents(_ configuration: ServerConfiguration, world: OutsideWorld, logger: Logger) throws
        -> DaemonComponents
    {
        let notifier = world.notifier
        return try DaemonComponents(
            configuration: configuration, clock: world.clock, metrics: world.metrics, space: StatvfsFilesystemSpace(),
            commitFaults: world.crashHook ?? NoCommitFaults(), logger: logger
        ) { what, bytes in
            _ = notifier.extendTimeout(by: .seconds(60 + bytes / 20_000_000))
            logger.notice("\(what): \(bytes) bytes, start-up takes longer this once")
        }
    }

    /// Brings the ClickHouse schema up to date when records are forwarded. A newer schema
    /// stops the start (it throws; exit 65); an unreachable ClickHouse does not: the collector
    /// spools and the forwarder migrates once it gets through.
    static func connectClickHouse(_ components: DaemonComponents, logger: Logger) async throws {
        guard let forwarder = components.forwarder else { return }
        do {
            try await ClickHouseMigrator(client: forwarder.client).migrate()
        } catch let error as ClickHouseError {
            logger.warning("ClickHouse is not reachable at start; spooling until it is", metadata: ["error": "\(error)"])
        }
    }

    /// A fresh install has no token, so nobody could call the API: the first start writes an
    /// admin token and says where.
    static func createFirstAdminTokenIfNeeded(_ components: DaemonComponents, logger: Logger) async throws {
        if let path = try await components.createFirstAdminTokenIfNeeded() {
            logger.notice("no tokens were configured: created an admin token", metadata: ["path": "\(path.path)"])
        }
    }
}
