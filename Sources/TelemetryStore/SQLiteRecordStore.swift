public import Foundation
public import Logging
public import Metrics
public import StoreCore
import Synchronization
public import TelemetryModel

/// The embedded default store: one SQLite database per environment under the data
/// directory (`prod/records.sqlite`, `ppe/records.sqlite`), zlib-compressed batches, and a
/// group committer in front. Run `committer` in the service group; appends wait for it.
/// The application builder is the one place that chooses this backend; everything else
/// sees ``RecordStore``, ``RetentionStore`` and ``CommitQueue``.
public final class SQLiteRecordStore: RecordStore, RetentionStore {
    let databases: PerEnvironment<EnvironmentDatabase>
    /// Each environment's space and spool, held directly rather than reached through its
    /// database: the retention and spool answers below come from them.
    let spaces: PerEnvironment<DatabaseSpace>
    let spools: PerEnvironment<EnvironmentSpool>
    let retention: PerEnvironment<EnvironmentRetention>
    let rollups: PerEnvironment<EnvironmentRollups>
    let deviceIndex: PerEnvironment<DeviceIndex>
    let readers: PerEnvironment<SQLiteRecordReader>
    let broadcaster = CommitBroadcaster()
    public let committer: GroupCommitter
    /// Merges old batches into segments; run it in the service group beside retention.
    public let compactor: Compactor
    public let directory: URL

    /// `clock` stamps each batch's receive time and times commits; `metrics` receives the
    /// committer's counters; `faults` is a test seam for cross-environment commits (see `CommitFaultInjector`).
    /// Opening resolves a cross-environment commit a crash interrupted, before any write;
    /// `maintenance` is told before a long one-time step at open (see ``StoreMaintenanceNotice``).
    public init(
        directory: URL, configuration: StoreConfiguration = .init(), faults: any CommitFaultInjector = NoCommitFaults(),
        clock: any WallClock, metrics: any MetricsFactory, logger: Logger = Logger(label: "store"),
        maintenance: @escaping StoreMaintenanceNotice = { _, _ in }
    ) throws {
        self.directory = directory
        let dbs = try PerEnvironment { env in
            try EnvironmentDatabase(
                env: env, directory: directory.appendingPathComponent(env.rawValue), configuration: configuration,
                maintenance: maintenance)
        }
        databases = dbs
        spaces = dbs.map(\.space)
        spools = dbs.map(\.spool)
        retention = dbs.map(\.retention)
        rollups = dbs.map(\.rollups)
        deviceIndex = dbs.map(\.deviceIndex)
        readers = dbs.map(\.reader)
        let recovered = try CrossEnvironmentCommit(databases: dbs).recover()
        if recovered.records > 0 {
            logger.notice(
                "published the records of a cross-environment commit a restart interrupted after its commit point",
                metadata: ["records": "\(recovered.records)"])
        }
        committer = GroupCommitter(
            databases: dbs, broadcaster: broadcaster, configuration: configuration, faults: faults, clock: clock, metrics: metrics,
            logger: logger)
        compactor = Compactor(
            databases: dbs, policy: configuration.compaction, faults: faults, clock: clock, metrics: metrics, logger: logger)
    }

    public func append(_ request: AppendRequest) async throws -> AppendOutcomes {
        try await committer.submit(request)
    }

    public func query(_ query: RecordQuery) async throws -> RecordPage {
        try await readers[query.env].query(query)
    }

    public func scan(_ query: RecordQuery, announcePageEnd: Bool, _ visit: @Sendable (ScanEvent) -> Void) async throws -> Int64? {
        try await readers[query.env].scan(query, announcePageEnd: announcePageEnd, visit)
    }

    public func eventStats(_ scan: EventStatsScan, _ visit: @Sendable (EventStatsInput) -> Void) async throws {
        try await rollups[scan.env].eventStats(scan, visit)
    }

    /// Reads the window's enrollment calls' keys (rollups hold no devices).
    public func enrollmentReach(env: TelemetryEnvironment, since: Int64, until: Int64, app: String?) async throws -> EnrollmentReach {
        let builder = Mutex(EnrollmentReach.Builder())
        let scan = EventStatsScan(env: env, name: EventName.enrollmentCall, since: since, until: until, app: app, rollupGrain: nil)
        try await rollups[env].eventStats(scan) { input in
            guard case .record(let k) = input, k.time >= since, k.time <= until, app == nil || k.appId == app else { return }
            builder.withLock { $0.add(k) }
        }
        return builder.withLock { $0.result() }
    }

    public func rebuildRollups(env: TelemetryEnvironment) async throws -> RollupRebuildResult {
        try await rollups[env].rebuild()
    }

    public func incident(id: String) async throws -> Incident? {
        for env in TelemetryEnvironment.allCases {
            if let found = try await readers[env].incident(id: id) { return found }
        }
        return nil
    }

    public func incidents(_ query: IncidentQuery) async throws -> IncidentPage {
        try await readers[query.env].incidents(query)
    }

    public func findDevices(_ lookup: DeviceLookup) async throws -> DeviceLookupResult {
        try await deviceIndex[lookup.env].find(lookup)
    }

    public func devices(
        usedBy user: IdentitySelector, env: TelemetryEnvironment, apps: Set<String>?, since: Int64?, until: Int64?, limit: Int
    ) async throws -> [String] {
        try await deviceIndex[env].devices(usedBy: user.normalized, apps: apps, since: since, until: until, limit: limit)
    }

    public func latestID(env: TelemetryEnvironment) async throws -> Int64 {
        try await readers[env].latestID()
    }

    public func commits() -> AsyncStream<CommitNotice> { broadcaster.subscribe() }

    /// Moves every environment's WAL checkpoint size while the store runs (see
    /// ``StoreConfiguration/walCheckpointBytes``; the daemon does on a reload that moved its
    /// disk guard's headroom).
    public func setWALCheckpointBytes(_ bytes: Int) async throws {
        for env in TelemetryEnvironment.allCases { try await databases[env].setWALCheckpointBytes(bytes) }
    }

    public func sizes() -> PerEnvironment<Int64> {
        spaces.map { $0.sizeOnDisk() }
    }

    // MARK: RetentionStore

    public func applyRetention(_ limits: RetentionPolicy.Limits, env: TelemetryEnvironment, nowMs: Int64, returnFreeSpace: Bool)
        async throws -> RetentionResult
    {
        try await retention[env].apply(limits, nowMs: nowMs, returnFreeSpace: returnFreeSpace)
    }

    public func usedBytes(env: TelemetryEnvironment) async throws -> Int64? {
        try await spaces[env].usedBytes()
    }

    public func returnFreeSpace(env: TelemetryEnvironment) async throws -> Int64 {
        try await spaces[env].returnFreePages()
    }

    public func oldestReceivedAt(_ retentionClass: RetentionClass, env: TelemetryEnvironment) async throws -> Int64? {
        try await retention[env].oldestReceivedAt(retentionClass)
    }

    public func deleteOldest(_ retentionClass: RetentionClass, env: TelemetryEnvironment, atLeast bytes: Int64) async throws
        -> RetentionResult
    {
        try await retention[env].deleteOldest(retentionClass, atLeast: bytes)
    }
}
