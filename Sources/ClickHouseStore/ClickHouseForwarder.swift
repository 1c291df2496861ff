import Foundation
import Logging
import Metrics
import ServiceLifecycle
import StoreCore
import Synchronization
import TelemetryModel

/// Ships the spool's committed batches to ClickHouse and removes each batch from the spool
/// only once ClickHouse acknowledged its insert: an acknowledged ingest request is on the
/// collector's disk until it is in ClickHouse. Batches go in commit order, several per insert
/// (up to `maxInsertRecords` and `maxInsertBytes`), at most `maxConcurrentInserts` inserts at a time; failures back
/// off exponentially with jitter. A batch re-sent after a crash between the insert and the
/// removal writes the same rows again, which the schema folds (see ``RecordID``).
///
/// With a cluster, inserts go to the `Distributed` table with `insert_distributed_sync=1`
/// (18.16 has it): ClickHouse answers only once every shard holding rows of the insert has
/// written them, so the acknowledgement means what it says.
public final class ClickHouseForwarder: Service, Sendable {
    public struct Tuning: Sendable {
        public var maxInsertRecords = 50_000
        /// And at most this many bytes of records per insert (a batch larger alone goes
        /// alone): large records make few inserts of tens of megabytes, each a long wait for
        /// the read fence with no progress to see, and a long re-send after a failure.
        public var maxInsertBytes = 8 << 20
        public var maxConcurrentInserts = 2
        public var idlePoll: Duration = .milliseconds(200)
        /// How stale the spool depth the ingest cap reads may be.
        public var depthRefresh: Duration = .milliseconds(250)
        public var backOff = BackOff()
        public init() {}
    }

    let spool: any Spool
    public let client: ClickHouseClient
    let collector: CollectorID
    let tuning: Tuning
    let clock: any WallClock
    let sleep: @Sendable (Duration) async throws -> Void
    let logger: Logger
    let metrics: ForwarderMetrics
    /// A test seam (see `CommitFaultInjector`): reached between an acknowledged insert and
    /// the spool's delete, the window a crash turns into a re-send.
    let faults: any CommitFaultInjector
    public let status = ForwarderStatus()

    /// `sleep` waits between passes and back-off attempts (tests pass a fast one); `clock`
    /// dates the oldest unshipped batch.
    public init(
        spool: any Spool, client: ClickHouseClient, collector: CollectorID, tuning: Tuning = .init(), clock: any WallClock,
        metrics: any MetricsFactory, logger: Logger, faults: any CommitFaultInjector = NoCommitFaults(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.spool = spool
        self.client = client
        self.collector = collector
        self.tuning = tuning
        self.clock = clock
        self.sleep = sleep
        self.logger = logger
        self.faults = faults
        self.metrics = ForwarderMetrics(factory: metrics)
    }

    public func run() async throws {
        // Ingest refuses at the spool cap by the depth this task keeps current, on its own
        // schedule: an attempt against an unreachable ClickHouse can take seconds and a
        // back-off up to 30 s, while the spool keeps filling at ingest speed.
        let depthWatch = Task {
            while !Task.isCancelled {
                try? await self.refreshDepth()
                try? await self.sleep(self.tuning.depthRefresh)
            }
        }
        defer { depthWatch.cancel() }
        await cancelWhenGracefulShutdown {
            var failures = 0
            var migrated = false
            while !Task.isCancelled {
                do {
                    if !migrated {
                        // The schema could not be made at start when ClickHouse was down.
                        try await ClickHouseMigrator(client: self.client).migrate()
                        migrated = true
                    }
                    let shipped = try await self.pass()
                    failures = 0
                    self.status.succeeded()
                    try await self.refreshDepth()
                    if shipped == 0 { try await self.sleep(self.tuning.idlePoll) }
                } catch is CancellationError {
                    break
                } catch let error as ClickHouseSchemaError {
                    self.status.failed(error.description, kind: "schema")
                    self.logger.critical("ClickHouse schema is newer than this daemon: forwarding stopped", metadata: ["error": "\(error)"])
                    try? await self.sleep(.seconds(60))
                } catch {
                    failures += 1
                    let kind = (error as? ClickHouseError)?.kind ?? "spool"
                    self.metrics.error(kind)
                    self.status.failed("\(error)", kind: kind)
                    if failures == 1 || failures % 20 == 0 {
                        self.logger.warning(
                            "forwarding to ClickHouse failed; the spool keeps the records and retries",
                            metadata: ["error": "\(error)", "attempt": "\(failures)"])
                    }
                    try? await self.refreshDepth()
                    try? await self.sleep(self.tuning.backOff.delay(attempt: failures))
                }
            }
        }
    }

    /// Ships what the spool holds now, both environments, and the incidents; returns the
    /// number of records shipped.
    func pass() async throws -> Int {
        var shipped = 0
        for env in TelemetryEnvironment.allCases {
            let batches = try await spool.unshippedBatches(env: env, after: 0, limit: 1000)
            var groups: [[SpoolBatch]] = [[]]
            var count = 0
            var bytes = 0
            for batch in batches {
                let batchBytes = batch.records.reduce(0) { $0 + $1.count }
                if count + batch.keys.count > tuning.maxInsertRecords || bytes + batchBytes > tuning.maxInsertBytes,
                    !groups[groups.count - 1].isEmpty
                {
                    groups.append([])
                    count = 0
                    bytes = 0
                }
                groups[groups.count - 1].append(batch)
                count += batch.keys.count
                bytes += batchBytes
            }
            let database = ClickHouseMigrator.database(client.configuration.database, env: env)
            var start = 0
            while start < groups.count {
                let wave = groups[start..<min(groups.count, start + tuning.maxConcurrentInserts)].filter { !$0.isEmpty }
                start += tuning.maxConcurrentInserts
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for batches in wave {
                        group.addTask { try await self.ship(batches, env: env, database: database) }
                    }
                    for try await n in group { shipped += n }
                }
            }
            let incidents = try await spool.unshippedIncidents(env: env)
            if !incidents.isEmpty {
                try await client.insert(
                    into: "incidents", database: database, format: "JSONEachRow",
                    rows: ClickHouseRows.incidents(incidents, collector: collector), settings: insertSettings)
                try await spool.markIncidentsShipped(env: env, ids: incidents.map(\.id))
            }
        }
        return shipped
    }

    var insertSettings: [(String, String)] {
        client.configuration.cluster == nil ? [] : [("insert_distributed_sync", "1")]
    }

    /// One insert of consecutive batches, then their removal from the spool.
    private func ship(_ batches: [SpoolBatch], env: TelemetryEnvironment, database: String) async throws -> Int {
        var rows: [UInt8] = []
        for batch in batches { ClickHouseRows.records(batch, collector: collector, into: &rows) }
        let started = clock.monotonicNow()
        try await client.insert(into: "records", database: database, format: "JSONEachRow", rows: rows, settings: insertSettings)
        metrics.insertDuration.recordNanoseconds(Int64(clock.monotonicNow().seconds(since: started) * 1e9))
        try faults.reached(.afterClickHouseInsert)
        try await spool.removeShipped(env: env, batchIDs: batches.map(\.batchID))
        let records = batches.reduce(0) { $0 + $1.keys.count }
        metrics.shipped(records, env: env)
        return records
    }

    func refreshDepth() async throws {
        var depth = SpoolDepth()
        for env in TelemetryEnvironment.allCases {
            let d = try await spool.depth(env: env)
            depth.records += d.records
            depth.bytes += d.bytes
            if let o = d.oldestReceivedAt { depth.oldestReceivedAt = min(depth.oldestReceivedAt ?? o, o) }
        }
        status.update(depth: depth)
        metrics.record(depth: depth, nowMs: clock.nowMilliseconds())
    }
}

/// Exponential back-off with full jitter: attempt n waits a random time up to
/// `base * 2^(n-1)`, capped, so collectors that lost ClickHouse together do not retry in step.
public struct BackOff: Sendable {
    public var base: Duration = .milliseconds(200)
    public var cap: Duration = .seconds(30)
    public var random: @Sendable (ClosedRange<Double>) -> Double = { Double.random(in: $0) }

    public init() {}

    public func delay(attempt: Int) -> Duration {
        let ceiling = min(cap / base, pow(2, Double(max(0, attempt - 1))))
        return base * random(0.5...1.0) * ceiling
    }
}
