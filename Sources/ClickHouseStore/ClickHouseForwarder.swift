import Foundation
public import Logging
public import Metrics
public import ServiceLifecycle
public import StoreCore
import Synchronization
public import TelemetryModel

/// Ships the spool's committed batches to ClickHouse and removes each batch from the spool
/// only once ClickHouse acknowledged its insert: an acknowledged ingest request is on the
/// collector's disk until it is in ClickHouse. Batches go several per insert (up to
/// `maxInsertRecords` and `maxInsertBytes`), as `TabSeparated` bodies built from each batch's
/// keys and lines, with up to `maxConcurrentInserts` inserts in flight while the next batches
/// are read; the spool forgets them in commit order (``ShipPlan``). Failures back off
/// exponentially with jitter. A batch re-sent after a crash between the insert and the
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
        /// Inserts stop launching while this many acknowledged batches wait for the spool's
        /// delete (it can wait for SQLite's writer behind ingest's group commits).
        public var maxBatchesAwaitingRemoval = 500
        /// Batches read from the spool at a time, while inserts are in flight.
        public var fetchBatches = 100
        /// At most this many batches of one environment per pass, so incidents and the
        /// other environment get their turn under sustained load.
        public var maxBatchesPerPass = 1000
        public var idlePoll: Duration = .milliseconds(200)
        /// How stale the spool depth the ingest cap reads may be.
        public var depthRefresh: Duration = .milliseconds(250)
        public var backOff = BackOff()
        public init() {}
    }

    let spool: any Spool
    public let client: ClickHouseClient
    /// Where record inserts go: `client`, unless a test wraps it.
    let inserts: any ClickHouseInserting
    /// Per environment, batches ClickHouse acknowledged that wait in the spool behind an
    /// insert that failed: the next pass retires them in their turn without re-sending them.
    private let acknowledged = Mutex<[TelemetryEnvironment: Set<Int64>]>([:])
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
    /// dates the oldest unshipped batch; `inserts` (a test seam) takes the record inserts in
    /// place of `client`.
    public init(
        spool: any Spool, client: ClickHouseClient, collector: CollectorID, tuning: Tuning = .init(), clock: any WallClock,
        metrics: any MetricsFactory, logger: Logger, faults: any CommitFaultInjector = NoCommitFaults(),
        inserts: (any ClickHouseInserting)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.spool = spool
        self.client = client
        self.inserts = inserts ?? client
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

    /// Ships what the spool holds now (up to `maxBatchesPerPass` batches of each
    /// environment), and the incidents; returns the number of records shipped.
    func pass() async throws -> Int {
        var shipped = 0
        for env in TelemetryEnvironment.allCases {
            let database = ClickHouseMigrator.database(client.configuration.database, env: env)
            shipped += try await shipRecords(env: env, database: database)
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

    /// Ships `env`'s spooled batches with up to `maxConcurrentInserts` inserts in flight while
    /// the next batches are read, and removes them from the spool in commit order as their
    /// inserts are acknowledged (``ShipPlan``). The removal is a task of its own, one at a
    /// time, each taking every batch acknowledged at the front so far: under ingest load the
    /// spool's delete waits for SQLite's writer behind group commits, and inserts keep
    /// launching meanwhile, up to `maxBatchesAwaitingRemoval` acknowledged batches. After a
    /// failure nothing new is sent; the inserts in flight finish, and those acknowledged
    /// behind the failed one (or whose removal failed) are remembered so the next pass
    /// retires them without sending them again.
    private func shipRecords(env: TelemetryEnvironment, database: String) async throws -> Int {
        var plan = ShipPlan(
            maxRecords: tuning.maxInsertRecords, maxBytes: tuning.maxInsertBytes,
            alreadyAcknowledged: acknowledged.withLock { $0[env] ?? [] })
        let fetchLimit = max(1, min(tuning.fetchBatches, tuning.maxBatchesPerPass))
        var after: Int64 = 0
        var fetched = 0
        var exhausted = false
        var shipped = 0
        var failure: (any Error)?
        await withTaskGroup(of: ShipStep.self) { group in
            var inFlight = 0
            var removing = false
            var removalFailed = false
            while true {
                if !removing, !removalFailed, let retiring = plan.startRetiring() {
                    removing = true
                    group.addTask {
                        let started = self.clock.monotonicNow()
                        do {
                            try await self.spool.removeShipped(env: env, batchIDs: retiring.batchIDs)
                        } catch {
                            return .removed(units: retiring.units, records: retiring.records, error: error)
                        }
                        self.metrics.removalDuration.recordNanoseconds(
                            Int64(self.clock.monotonicNow().seconds(since: started) * 1e9))
                        return .removed(units: retiring.units, records: retiring.records, error: nil)
                    }
                }
                // The cap on acknowledged batches holds only while something in flight will
                // lower it: batches acknowledged in an earlier pass may exceed it behind an
                // insert not yet re-sent.
                while failure == nil, inFlight < tuning.maxConcurrentInserts,
                    (inFlight == 0 && !removing) || plan.batchesAwaitingRemoval < tuning.maxBatchesAwaitingRemoval
                {
                    if let (index, batches) = plan.nextInsert() {
                        group.addTask {
                            do {
                                try await self.insert(batches, database: database)
                                return .inserted(index: index, error: nil)
                            } catch {
                                return .inserted(index: index, error: error)
                            }
                        }
                        inFlight += 1
                    } else if !exhausted {
                        do {
                            let batches = try await spool.unshippedBatches(env: env, after: after, limit: fetchLimit)
                            fetched += batches.count
                            after = batches.last?.batchID ?? after
                            exhausted = batches.count < fetchLimit || fetched >= tuning.maxBatchesPerPass
                            plan.add(batches, closing: exhausted)
                        } catch {
                            failure = error
                        }
                    } else {
                        break
                    }
                }
                // Nothing in flight and nothing removing: the acknowledged front was handed to
                // a removal above (unless one failed, which ends the pass), so the pass is over.
                guard inFlight > 0 || removing, let step = await group.next() else { break }
                switch step {
                case .inserted(let index, let error):
                    inFlight -= 1
                    if let error {
                        failure = failure ?? error
                        plan.fail(index)
                    } else {
                        plan.acknowledge(index)
                    }
                case .removed(let units, let records, let error):
                    removing = false
                    if let error {
                        failure = failure ?? error
                        removalFailed = true
                        plan.retiringFailed(units: units)
                    } else {
                        plan.retired(units: units)
                        shipped += records
                        metrics.shipped(records, env: env)
                    }
                }
            }
        }
        let waiting = plan.acknowledgedNotRetired
        acknowledged.withLock { $0[env] = waiting }
        if let failure { throw failure }
        return shipped
    }

    /// What finished in ``shipRecords(env:database:)``'s task group.
    private enum ShipStep: Sendable {
        case inserted(index: Int, error: (any Error)?)
        case removed(units: Int, records: Int, error: (any Error)?)
    }

    /// One insert of consecutive batches, its body built straight from their keys and lines.
    private func insert(_ batches: [SpoolBatch], database: String) async throws {
        // Each record's line, plus its keys and ids, which are short.
        let capacity = batches.reduce(0) { total, batch in batch.records.reduce(total + batch.keys.count * 192) { $0 + $1.count } }
        var body = TabSeparatedWriter(capacity: capacity)
        for batch in batches { ClickHouseRows.records(batch, collector: collector, into: &body) }
        let started = clock.monotonicNow()
        try await inserts.insert(
            into: "records", database: database, columns: ClickHouseRows.recordColumns, format: "TabSeparated", rows: body.bytes,
            settings: insertSettings)
        // After the rows: an `event_ids` row then always names a record ClickHouse holds,
        // so another collector answers `duplicate` only for what is there to read. A failure
        // here fails the insert, which is sent again whole (both tables fold re-sent rows).
        let eventIDCount = batches.reduce(0) { $0 + $1.eventIDs.count }
        if eventIDCount > 0 {
            var ids = TabSeparatedWriter(capacity: eventIDCount * 96)
            for batch in batches { ClickHouseRows.eventIDs(batch, collector: collector, into: &ids) }
            try await inserts.insert(
                into: "event_ids", database: database, columns: ClickHouseRows.eventIDColumns, format: "TabSeparated",
                rows: ids.bytes, settings: insertSettings)
        }
        metrics.insertDuration.recordNanoseconds(Int64(clock.monotonicNow().seconds(since: started) * 1e9))
        try faults.reached(.afterClickHouseInsert)
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
