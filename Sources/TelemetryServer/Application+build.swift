import Bundles
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import TelemetryModel
import TelemetryStore

/// The long-lived parts of a running daemon, opened from the configuration. Kept apart
/// from the HTTP application so the daemon's services (committer, journal mirror,
/// watchdog) and tests can reach them.
public struct DaemonComponents: Sendable {
    public let configuration: ServerConfiguration
    public let store: SQLiteRecordStore
    public let registry: AppRegistry
    public let pseudonymizer: Pseudonymizer
    public let clock: any WallClock

    public init(configuration: ServerConfiguration, clock: any WallClock = SystemWallClock(), logger: Logger) throws {
        self.configuration = configuration
        self.clock = clock
        let dir = configuration.dataDirectory
        store = try SQLiteRecordStore(directory: dir, configuration: configuration.store, logger: logger)
        registry = try AppRegistry(directory: dir)
        registry.setConfigured(configuration.configuredApps)
        pseudonymizer = try Pseudonymizer.load(from: dir.appendingPathComponent("pseudonym.key"))
    }
}

/// Extra wiring the daemon adds around the HTTP application (journald, systemd).
public struct ApplicationHooks: Sendable {
    public var mirror: any LogRecordMirror = DisabledLogMirror()
    public var services: [any Service] = []
    public var readinessChecks: [ReadinessCheck] = []
    public var onServerRunning: @Sendable (any Channel) async -> Void = { _ in }

    public init() {}
}

/// Builds the router with every route. The seam tests call (with HummingbirdTesting) and
/// the daemon runs.
public func buildRouter(components c: DaemonComponents, hooks: ApplicationHooks, logger: Logger) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    let pipeline = IngestPipeline(
        store: c.store, registry: c.registry, clock: c.clock, mirror: hooks.mirror, configuration: c.configuration,
        logger: logger)
    let committer = c.store.committer
    let storeCheck = ReadinessCheck(name: "store", required: true) {
        committer.isHealthy() ? (true, "open, accepting") : (false, "commit in progress for too long")
    }
    HealthRoutes(checks: [storeCheck] + hooks.readinessChecks).register(on: router)
    IngestRoutes(pipeline: pipeline).register(on: router)
    QueryRoutes(store: c.store, clock: c.clock).register(on: router)
    AppRoutes(registry: c.registry, clock: c.clock).register(on: router)
    // MARK: routes (further route groups register here)
    return router
}

/// The HTTP application: router + the store's group committer (listed before the server,
/// so on shutdown the server drains its requests first and the committer commits last).
public func buildApplication(
    components: DaemonComponents, hooks: ApplicationHooks = .init(), logger: Logger
) -> some ApplicationProtocol {
    let router = buildRouter(components: components, hooks: hooks, logger: logger)
    return Application(
        router: router,
        configuration: .init(
            address: .hostname(components.configuration.host, port: components.configuration.port),
            serverName: "mamtelemetryd"),
        services: [components.store.committer] + hooks.services,
        onServerRunning: hooks.onServerRunning,
        logger: logger)
}
