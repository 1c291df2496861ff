import Metrics
import StoreCore
import Synchronization
import TelemetryModel

/// Recognises a client's retry that another collector stored first: before a request is
/// appended to the spool, its records' (kind, app, `eventId`) are looked up in ClickHouse's
/// `event_ids`, and those found are answered `duplicate` instead of being stored again. A
/// load balancer that resends a timed-out request to another collector then leaves one row in
/// ClickHouse, as a retry to the same collector always did (its spool knows its own ids).
///
/// What it covers: an original that reached ClickHouse before the retry arrived (a healthy
/// collector ships within a second; a retry comes after a client's timeout, seconds later).
/// What it does not: an original still in the other collector's spool (ClickHouse was
/// unreachable from it), or two copies arriving at two collectors at the same moment; both
/// are then stored, as two rows. The check fails open: when ClickHouse does not answer within
/// `deadline` the request is stored as if new (ingest never waits on ClickHouse's health)
/// and ``MetricName/clickHouseRetryCheckSkipped`` counts it; for `pause` after such a miss
/// no request asks (and each is counted), so an outage that swallows packets costs one
/// deadline per pause, not one per request.
///
/// Requests that arrive while a lookup runs share the next one (``LookupBatch``): one
/// statement per collector in ClickHouse at a time, however many requests ingest takes.
///
/// Records of a diagnostic upload are not looked up: their identity includes their incident.
final class ClickHouseRetryCheck: Sendable {
    let client: ClickHouseClient
    let database: @Sendable (TelemetryEnvironment) -> String
    let deadline: Duration
    let skipped: Counter
    let pause: Duration = .seconds(5)
    /// When the last check went unanswered.
    private let lastMiss = Mutex<ContinuousClock.Instant?>(nil)
    /// One lookup in ClickHouse at a time; requests that arrive meanwhile share the next.
    private let batch: LookupBatch<Target, Key>

    init(client: ClickHouseClient, database: @escaping @Sendable (TelemetryEnvironment) -> String, deadline: Duration, skipped: Counter) {
        self.client = client
        self.database = database
        self.deadline = deadline
        self.skipped = skipped
        batch = LookupBatch { target, keys in
            await Self.within(deadline) {
                try await Self.query(client: client, database: database(target.env), kind: target.kind, keys: keys, deadline: deadline)
            }
        }
    }

    /// ClickHouse's own time limit for a lookup: the deadline in whole seconds (18.16 counts
    /// `max_execution_time` in seconds), at least one. A lookup the collector gave up on keeps
    /// running in the server otherwise (18.16 does not cancel a read when its HTTP client
    /// goes away): in a 10-minute run at 10k records/s (BENCHMARKS.md, issue 26's sustained
    /// shipping), once `event_ids` held a few million random ids, lookups took 6 s each, ten
    /// of them abandoned ones ran at once, and ClickHouse's CPU went to them instead of the
    /// inserts: shipping stalled for a minute and the spool grew to 640k records.
    static func lookupSettings(deadline: Duration) -> [(String, String)] {
        let seconds = max(1, deadline.components.seconds + (deadline.components.attoseconds > 0 ? 1 : 0))
        return [("max_execution_time", String(seconds)), ("timeout_overflow_mode", "throw")]
    }

    /// Positions of the records of `request` that ClickHouse already holds, per kind and
    /// environment (absent when none is). Empty when the check could not run.
    func storedElsewhere(_ request: AppendRequest) async -> [RecordKind: [TelemetryEnvironment: [Int]]] {
        guard request.incident == nil else { return [:] }
        var found: [RecordKind: [TelemetryEnvironment: [Int]]] = [:]
        for (kind, byEnv) in request.records {
            for (env, records) in byEnv {
                let candidates = records.indices.filter { records[$0].eventId != nil && records[$0].keys.incident.isEmpty }
                guard !candidates.isEmpty else { continue }
                guard let known = await lookup(kind: kind, env: env, records: candidates.map { records[$0] }) else { return [:] }
                let positions = candidates.filter { known.contains(Key(records[$0].keys.appId, records[$0].eventId!)) }
                if !positions.isEmpty { found[kind, default: [:]][env] = positions }
            }
        }
        return found
    }

    /// Compared as bytes, as ClickHouse and the spool compare them (Swift's `String` equality
    /// would take two canonically equivalent spellings for one id).
    struct Key: Hashable {
        var app: [UInt8]
        var eventId: [UInt8]

        /// A record's identity, cut as ``RetryIdentity`` cuts it.
        init(_ app: String, _ eventId: String) {
            self.app = Array(RetryIdentity.text(app).utf8)
            self.eventId = Array(RetryIdentity.text(eventId).utf8)
        }

        init(app: ArraySlice<UInt8>, eventId: ArraySlice<UInt8>) {
            self.app = TabSeparatedRows.bytes(app)
            self.eventId = TabSeparatedRows.bytes(eventId)
        }
    }

    /// How many bytes of ids one statement carries at most: a server from 19.11 on takes them
    /// as a URL parameter, and its URL is bounded (1 MiB by default); a request of 10,000
    /// records with long ids would pass that in one statement.
    static let maxIDBytesPerStatement = 128 << 10

    /// The distinct ids in chunks of at most ``maxIDBytesPerStatement`` bytes each (an id
    /// longer than that alone), in a stable order.
    static func idChunks(_ ids: Set<[UInt8]>) -> [[String]] {
        var chunks: [[String]] = []
        var chunk: [String] = []
        var bytes = 0
        for id in ids.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            if !chunk.isEmpty, bytes + id.count > maxIDBytesPerStatement {
                chunks.append(chunk)
                chunk = []
                bytes = 0
            }
            chunk.append(String(decoding: id, as: UTF8.self))
            bytes += id.count
        }
        if !chunk.isEmpty { chunks.append(chunk) }
        return chunks
    }

    /// Where one lookup reads: a kind's ids in one environment's database.
    struct Target: Hashable {
        var kind: RecordKind
        var env: TelemetryEnvironment
    }

    /// The keys among `records` that `event_ids` holds; nil when ClickHouse did not answer in time.
    private func lookup(kind: RecordKind, env: TelemetryEnvironment, records: [DecodedRecord]) async -> Set<Key>? {
        let paused = lastMiss.withLock { miss in miss.map { ContinuousClock.now < $0.advanced(by: pause) } ?? false }
        if paused {
            skipped.increment()
            return nil
        }
        // Distinct by bytes: a `Set<String>` would keep one of two canonically equivalent
        // spellings, which ClickHouse holds as two different values.
        let keys = Set(records.map { Key($0.keys.appId, $0.eventId ?? "") })
        let batch = self.batch
        // The request waits one deadline at most, also when it queued behind a running lookup.
        guard let found = await Self.within(deadline, { await batch.lookup(Target(kind: kind, env: env), keys) }) else {
            skipped.increment()
            lastMiss.withLock { $0 = .now }
            return nil
        }
        return found
    }

    /// The keys among `keys` that `event_ids` holds, in as many statements as the ids need.
    private static func query(
        client: ClickHouseClient, database: String, kind: RecordKind, keys: Set<Key>, deadline: Duration
    ) async throws -> Set<Key> {
        let apps = Set(keys.map(\.app)).map { String(decoding: $0, as: UTF8.self) }
        let kindName: ClickHouseSQL = kind == .event ? "'event'" : "'log'"
        let settings = lookupSettings(deadline: deadline)
        var found: Set<Key> = []
        // Sets from subqueries, so the primary key (kind, app, eventId) narrows the read to the
        // granules that can hold the ids, however many rows the table has.
        for ids in idChunks(Set(keys.map(\.eventId))) {
            let answer = try await client.execute(
                """
                SELECT app, eventId FROM \(identifier: database).event_ids
                WHERE kind = \(fragment: kindName) AND app IN (SELECT arrayJoin(\(apps))) AND eventId IN (SELECT arrayJoin(\(ids)))
                FORMAT TabSeparated
                """,
                settings: settings)
            let rows = try TabSeparatedRows(answer, columns: 2)
            for row in 0..<rows.count { found.insert(Key(app: rows.field(row, 0), eventId: rows.field(row, 1))) }
        }
        return found
    }

    /// `body`'s answer, or nil when it failed or `deadline` passed first (then it is cancelled).
    private static func within<T: Sendable>(_ deadline: Duration, _ body: @escaping @Sendable () async throws -> T?) async -> T? {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { try? await body() }
            group.addTask {
                // The real clock, not a test's fast sleep: the deadline is wall time ingest waits.
                try? await Task.sleep(for: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

extension AppendRequest {
    /// The request without the records at `positions` (per kind and environment); groups left
    /// empty are dropped.
    func removing(_ positions: [RecordKind: [TelemetryEnvironment: [Int]]]) -> AppendRequest {
        var copy = self
        for (kind, byEnv) in positions {
            for (env, drop) in byEnv {
                guard let records = copy.records[kind]?[env] else { continue }
                let dropped = Set(drop)
                let kept = records.indices.filter { !dropped.contains($0) }.map { records[$0] }
                copy.records[kind]?[env] = kept.isEmpty ? nil : kept
            }
            if copy.records[kind]?.isEmpty == true { copy.records[kind] = nil }
        }
        return copy
    }
}

extension AppendOutcomes {
    /// The outcomes of the request before `removing(positions)`, from those of the request
    /// after it: removed records count as duplicates, and every position is the original's.
    func restoring(_ positions: [RecordKind: [TelemetryEnvironment: [Int]]], in request: AppendRequest) -> AppendOutcomes {
        var result = self
        for (kind, byEnv) in positions {
            for (env, removed) in byEnv {
                let count = request.records[kind]?[env]?.count ?? 0
                let removedSet = Set(removed)
                let kept = (0..<count).filter { !removedSet.contains($0) }
                var outcome = self[env, kind] ?? AppendOutcome(stored: 0, duplicates: 0, ids: [])
                outcome.duplicateIndices = (outcome.duplicateIndices.map { kept[$0] } + removed).sorted()
                outcome.duplicates += removed.count
                result.byEnvironment[env, default: [:]][kind] = outcome
            }
        }
        return result
    }
}
