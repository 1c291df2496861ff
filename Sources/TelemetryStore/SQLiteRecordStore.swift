import Foundation
import Logging
import TelemetryModel

/// The embedded default store: one SQLite database per environment under the data
/// directory (`prod/records.sqlite`, `ppe/records.sqlite`), zlib-compressed batches, and a
/// group committer in front. Run `committer` in the service group; appends wait for it.
public final class SQLiteRecordStore: RecordStore {
    let databases: [TelemetryEnvironment: EnvironmentDatabase]
    let broadcaster = CommitBroadcaster()
    public let committer: GroupCommitter
    public let directory: URL

    /// `faults` is a test seam for cross-environment commits (see `CommitFaultInjector`).
    /// Opening resolves a cross-environment commit a crash interrupted, before any write;
    /// `maintenance` is told before a long one-time step at open (see ``StoreMaintenanceNotice``).
    public init(
        directory: URL, configuration: StoreConfiguration = .init(), faults: any CommitFaultInjector = NoCommitFaults(),
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        logger: Logger = Logger(label: "store"), maintenance: @escaping StoreMaintenanceNotice = { _, _ in }
    ) throws {
        self.directory = directory
        var dbs: [TelemetryEnvironment: EnvironmentDatabase] = [:]
        for env in TelemetryEnvironment.allCases {
            dbs[env] = try EnvironmentDatabase(
                env: env, directory: directory.appendingPathComponent(env.rawValue), configuration: configuration,
                maintenance: maintenance)
        }
        databases = dbs
        let recovered = try CrossEnvironmentCommit(
            stagingDatabase: dbs[CrossEnvironmentCommit.staging]!, decidingDatabase: dbs[CrossEnvironmentCommit.deciding]!
        ).recover()
        if recovered.records > 0 {
            logger.notice(
                "published the records of a cross-environment commit a restart interrupted after its commit point",
                metadata: ["records": "\(recovered.records)"])
        }
        committer = GroupCommitter(
            databases: dbs, broadcaster: broadcaster, configuration: configuration, faults: faults, clock: clock, logger: logger)
    }

    public func append(_ request: AppendRequest) async throws -> [TelemetryEnvironment: AppendOutcome] {
        try await committer.submit(request)
    }

    public func query(_ query: RecordQuery) async throws -> RecordPage {
        try await databases[query.env]!.query(query)
    }

    public func scanKeys(
        kind: RecordKind, env: TelemetryEnvironment, since: Int64?, until: Int64?,
        _ visit: @Sendable (RecordKeys) -> Void
    ) async throws {
        try await databases[env]!.scanKeys(kind: kind, since: since, until: until, visit)
    }

    public func eventStats(_ scan: EventStatsScan, _ visit: @Sendable (EventStatsInput) -> Void) async throws {
        try await databases[scan.env]!.eventStats(scan, visit)
    }

    public func rebuildRollups(env: TelemetryEnvironment) async throws -> RollupRebuildResult {
        try await databases[env]!.rebuildRollups()
    }

    public func incident(id: String) async throws -> Incident? {
        for env in TelemetryEnvironment.allCases {
            if let found = try await databases[env]!.incident(id: id) { return found }
        }
        return nil
    }

    public func latestID(env: TelemetryEnvironment) async throws -> Int64 {
        try await databases[env]!.latestID()
    }

    public func commits() -> AsyncStream<CommitNotice> { broadcaster.subscribe() }

    public func sizes() -> [TelemetryEnvironment: Int64] {
        databases.mapValues { $0.sizeOnDisk() }
    }
}
