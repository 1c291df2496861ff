import Bundles
public import ClickHouseStore
public import ControlState
public import Foundation
public import Hummingbird
public import Logging
public import NIOCore
public import Privacy
public import ServiceLifecycle
public import StoreCore
import SupportConsole
public import Systemd
public import TelemetryModel
public import TelemetryStore

/// The long-lived parts of a running daemon, opened from the configuration. Kept apart
/// from the HTTP application so the daemon's services (committer, journal mirror,
/// watchdog) and tests can reach them.
public struct DaemonComponents: Sendable {
    public let configuration: ServerConfiguration
    /// Where records are kept; routes, bundles and ingest see only the protocols.
    public let store: any RecordStore
    /// The store's write queue: admission's bound, the watchdog's liveness, the status rate.
    public let commitQueue: any CommitQueue
    /// The store's own background work (the embedded store's group committer).
    public let storeServices: [any Service]
    public let registry: AppRegistry
    public let pseudonymizer: Pseudonymizer
    /// The one clock every component reads.
    public let clock: any WallClock
    /// The metrics backend every component records into and `/metrics` renders.
    public let metrics: PrometheusMetrics
    public let disk: DiskGuard
    public let retention: RetentionService
    public let tokens: TokenStore
    /// What `systemctl reload` changes while running; components read it when they act.
    public let settings: LiveSettings
    public let drops: DropLedger
    /// The embedded store: the record store itself, or ClickHouse's spool.
    private let embedded: SQLiteRecordStore
    /// Free space of the data directory's filesystem.
    private let space: any FilesystemSpace
    /// Ships the spool to ClickHouse (`store.backend: clickhouse`); nil on the embedded backend.
    public let forwarder: ClickHouseForwarder?

    /// The daemon passes the outside world in: `clock` (time), `metrics` (the backend),
    /// `space` (free space of the data directory's filesystem). `commitFaults` is a test
    /// seam of the store (see `CommitFaultInjector`); `maintenance` is told before a long
    /// one-time step while the store opens.
    public init(
        configuration: ServerConfiguration, clock: any WallClock, metrics: PrometheusMetrics, space: any FilesystemSpace,
        commitFaults: any CommitFaultInjector = NoCommitFaults(), logger: Logger,
        maintenance: @escaping StoreMaintenanceNotice = { _, _ in }
    ) throws {
        self.configuration = configuration
        self.clock = clock
        self.metrics = metrics
        let dir = configuration.dataDirectory
        // The one place the backend is chosen: the embedded SQLite store, alone or as ClickHouse's spool.
        let sqlite = try SQLiteRecordStore(
            directory: dir, configuration: configuration.store.boundedByDiskHeadroom(Self.diskHeadroom(configuration.disk, space, dir)),
            faults: commitFaults, clock: clock, metrics: metrics.factory, logger: logger, maintenance: maintenance)
        embedded = sqlite
        self.space = space
        // With ClickHouse the embedded store stays the write path (group commit, "2xx means
        // durable") and becomes the spool the forwarder drains; reads go to ClickHouse.
        commitQueue = sqlite.committer
        if configuration.backend == .clickhouse, let collector = configuration.clickhouse.collectorID {
            let client = ClickHouseClient(configuration: configuration.clickhouse.client)
            var tuning = ClickHouseRecordStore.Tuning()
            tuning.recogniseRetries = configuration.clickhouse.recogniseRetries
            store = ClickHouseRecordStore(spool: sqlite, client: client, tuning: tuning, clock: clock, metrics: metrics.factory)
            let forwarder = ClickHouseForwarder(
                spool: sqlite, client: client, collector: CollectorID(collector), clock: clock, metrics: metrics.factory, logger: logger,
                faults: commitFaults)
            self.forwarder = forwarder
            // No compactor: spool rows live only until shipped, and the spool reader and its
            // per-batch deletes expect the group commit's batches, not segments. The client's
            // owner goes first, so it is stopped last, after the reads, retention and forwarder.
            storeServices = [ClickHouseClientService(client: client), sqlite.committer, forwarder]
        } else {
            store = sqlite
            forwarder = nil
            // The compactor merges the store's old small batches into segments.
            storeServices = [sqlite.committer, sqlite.compactor]
        }
        // Bundles spool their members here while they stream out.
        try PrivateFiles.directory(dir.appendingPathComponent("tmp"))
        let control = try ControlDatabase.open(directory: dir)
        registry = try AppRegistry(control: control)
        registry.setConfigured(configuration.configuredApps)
        pseudonymizer = try PseudonymKeyFile.load(from: dir.appendingPathComponent("pseudonym.key"))
        tokens = try TokenStore(control: control)
        drops = try DropLedger(control: control, logger: logger, clock: clock)
        let settings = LiveSettings(configuration)
        self.settings = settings
        // On ClickHouse, retention drops ClickHouse partitions and never ages out the spool:
        // an outage longer than the retention period must not delete unshipped records.
        let retentionStore: any RetentionStore =
            forwarder.map { ClickHouseRetention(client: $0.client, spool: sqlite, logger: logger) } ?? sqlite
        // The embedded store's size cap is held as it grows (a pass after each step of growth);
        // ClickHouse's size is not measured here.
        let commits: @Sendable () -> AsyncStream<CommitNotice> = { sqlite.commits() }
        let retention = RetentionService(
            store: retentionStore, policy: { settings.current.retention }, commits: forwarder == nil ? commits : nil, logger: logger,
            clock: clock, metrics: metrics.factory)
        self.retention = retention
        let transitions = DiskTransitionLog(logger: logger, dataDirectory: dir.path)
        disk = DiskGuard(
            directory: dir, configuration: { settings.current.disk }, space: space, retention: retention,
            metrics: metrics.factory, logger: logger, onTransition: transitions.record, commits: commits)
    }

    /// On first start (no token exists) creates an admin token in `<data-dir>/admin.token`
    /// (mode 0600) so the operator, and `mamtelemetryctl` on this host, can get in.
    /// Returns the file's path when one was created.
    public func createFirstAdminTokenIfNeeded() async throws -> URL? {
        guard configuration.auth.enabled, tokens.isEmpty else { return nil }
        let (_, secret) = try await tokens.create(name: "first-start admin", scopes: [.admin], apps: [], now: clock.nowMilliseconds())
        let path = configuration.dataDirectory.appendingPathComponent("admin.token")
        try PrivateFiles.createFile(path.path, contents: Array((secret + "\n").utf8))
        return path
    }

    /// The free space below which the disk guard refuses ingest, which bounds the WAL's
    /// checkpoint size (``StoreConfiguration/boundedByDiskHeadroom(_:)``).
    private static func diskHeadroom(_ disk: DiskGuard.Configuration, _ space: any FilesystemSpace, _ dir: URL) -> Int64 {
        disk.highWaterBytes(totalBytes: space.usage(of: dir)?.totalBytes ?? 0)
    }

    /// What a reload puts in force beyond the settings themselves (call it after
    /// `settings.apply`): a retention pass and the disk checks, so a lowered retention or a
    /// raised keep-free floor frees space now rather than at the next pass, and the WAL's
    /// bound from the new floor's headroom. Each step logs its own failure and the next runs.
    public func actOnReloadedSettings(logger: Logger) async {
        do {
            try await retention.sweep()
        } catch {
            logger.error("retention pass after reload failed", metadata: ["error": "\(error)"])
        }
        disk.check()
        await disk.keepFloor()
        do {
            try await boundWALByDiskHeadroom()
        } catch {
            logger.error("reload: the WAL checkpoint size could not be set", metadata: ["error": "\(error)"])
        }
    }

    /// Bounds the WAL's checkpoint size by the headroom of the disk settings in force: after
    /// a reload that lowered the keep-free floor, a WAL sized for the old floor could outgrow
    /// what a full disk can still take into the database file.
    private func boundWALByDiskHeadroom() async throws {
        let headroom = Self.diskHeadroom(settings.current.disk, space, configuration.dataDirectory)
        try await embedded.setWALCheckpointBytes(configuration.store.boundedByDiskHeadroom(headroom).walCheckpointBytes)
    }

    /// The background services every daemon runs beside the HTTP server.
    public var services: [any Service] { storeServices + [drops, disk, retention] }
}

/// Extra wiring the daemon adds around the HTTP application (journald, systemd).
public struct ApplicationHooks: Sendable {
    public var mirror: any LogRecordMirror = DisabledLogMirror()
    /// Gathers failed enrollment calls for the journal; its service belongs in `services`.
    public var enrollmentFailures: EnrollmentFailureDigest?
    public var services: [any Service] = []
    public var readinessChecks: [ReadinessCheck] = []
    public var onServerRunning: @Sendable (any Channel) async -> Void = { _ in }

    public init() {}
}

/// Builds the router with every route. The seam tests call (with HummingbirdTesting) and
/// the daemon runs. Each route group declares the access its routes need where they are
/// registered (`APIRoutes`); a path no route matches is 404 before any check or handler runs.
/// `routeTable` receives every registration, for tests that compare it with `router.routes`.
public func buildRouter(
    components c: DaemonComponents, hooks: ApplicationHooks, logger: Logger, routeTable: RouteTable = RouteTable()
) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    // Middleware applies to the routes added after it: count every request, refused ones too.
    router.add(middleware: HTTPMetricsMiddleware(factory: c.metrics.factory))
    router.add(middleware: StoreErrorMiddleware(logger: logger))
    let settings = c.settings
    var accessLog = logger
    accessLog[metadataKey: "log"] = "access"
    let api = APIRoutes(
        router: router, tokens: c.tokens, configuration: c.configuration.auth, accessLog: accessLog,
        incidents: IncidentApps(store: c.store), table: routeTable)
    let commitQueue = c.commitQueue
    let storeCheck = ReadinessCheck(name: "store", required: true) {
        commitQueue.isHealthy() ? (true, "open, accepting") : (false, "commit in progress for too long")
    }
    var checks = [storeCheck]
    var spoolLimit: (@Sendable () -> (waiting: Int64, limit: Int64))?
    if let forwarder = c.forwarder {
        checks.append(ForwarderReadiness.check(forwarder.status, spoolMaxBytes: c.configuration.clickhouse.spoolMaxBytes, clock: c.clock))
        let limit = c.configuration.clickhouse.spoolMaxBytes
        spoolLimit = { (forwarder.status.snapshot.depth.bytes, limit) }
    }
    HealthRoutes(checks: checks + hooks.readinessChecks).register(on: api)
    let admission = IngestAdmission(
        limits: .init(
            maxInFlightBytes: c.configuration.maxInFlightBytes, maxQueuedRecords: c.configuration.maxQueuedRecords,
            maxWait: .milliseconds(c.configuration.maxAdmissionWaitMilliseconds)),
        commitQueue: c.commitQueue, disk: c.disk, metrics: c.metrics.factory, spool: spoolLimit)
    let rateLimiter = TokenRateLimiter(
        recordsPerSecond: { settings.current.perTokenRecordsPerSecond }, clock: c.clock, metrics: c.metrics.factory)
    let pipeline = IngestPipeline(
        store: c.store, registry: c.registry, clock: c.clock, mirror: hooks.mirror, configuration: c.configuration,
        settings: settings, rateLimiter: rateLimiter, drops: DropCounter(ledger: c.drops, factory: c.metrics.factory),
        metrics: IngestMetrics(factory: c.metrics.factory, registry: c.registry), logger: logger,
        enrollmentFailures: hooks.enrollmentFailures)
    IngestRoutes(pipeline: pipeline, admission: admission, refusals: IngestRefusalLog(logger: logger, clock: c.clock)).register(on: api)
    QueryRoutes(store: c.store, clock: c.clock, pseudonymizer: c.pseudonymizer, tokens: c.tokens).register(on: api)
    AppRoutes(registry: c.registry, clock: c.clock).register(on: api)
    TokenRoutes(tokens: c.tokens, clock: c.clock).register(on: api)
    OpenAPIRoutes().register(on: api)
    BundleRoutes(
        store: c.store, pseudonymizer: c.pseudonymizer, clock: c.clock,
        temporaryDirectory: c.configuration.dataDirectory.appendingPathComponent("tmp")
    ).register(on: api)
    MetricsRoutes(registry: c.metrics.registry, store: c.store, metricsOpen: { !settings.current.metricsRequireToken })
        .register(on: api)
    StatsRoutes(store: c.store, drops: c.drops, clock: c.clock, pseudonymizer: c.pseudonymizer).register(on: api)
    ConsoleRoutes(catalog: ConsoleAssetCatalog()).register(on: api)
    PseudonymRoutes(pseudonymizer: c.pseudonymizer).register(on: api)
    StatusCodeRoutes().register(on: api)
    DeviceRoutes(store: c.store, pseudonymizer: c.pseudonymizer).register(on: api)
    IncidentListRoutes(store: c.store, clock: c.clock, pseudonymizer: c.pseudonymizer).register(on: api)
    FleetRoutes(store: c.store, registry: c.registry, clock: c.clock, pseudonymizer: c.pseudonymizer).register(on: api)
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
        services: components.services + hooks.services,
        onServerRunning: hooks.onServerRunning,
        logger: logger)
}
