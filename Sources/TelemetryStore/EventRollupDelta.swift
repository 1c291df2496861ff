import Compression
import Foundation
import GRDB
import StoreCore
import TelemetryModel

/// The rollup rows a set of stored events adds, at every ``EventRollupGrain``, gathered in
/// memory and then added to the rollup tables in the caller's transaction — the one that
/// makes the events visible, so rollups and records never disagree.
struct EventRollupDelta: Sendable {
    /// The grains gathered; a migration that adds a grain gathers that one alone.
    let grains: Set<EventRollupGrain>
    private(set) var hours = RollupCells()
    private(set) var minutes = RollupCells()
    /// Events added (those in ``EventRollupScope``).
    private(set) var events = 0

    init(grains: Set<EventRollupGrain> = Set(EventRollupGrain.allCases)) {
        self.grains = grains
    }

    var isEmpty: Bool { hours.isEmpty && minutes.isEmpty }

    /// Adds one stored event; events outside ``EventRollupScope`` are not rolled up.
    mutating func add(_ k: RecordKeys, receivedAt: Int64) {
        guard EventRollupScope.names.contains(k.name) else { return }
        events += 1
        let labels = RollupCells.Labels(k)
        if grains.contains(.hour) { hours.add(k, labels: labels, start: EventRollupScope.hour(of: k.time), receivedAt: receivedAt) }
        if grains.contains(.minute) {
            minutes.add(k, labels: labels, start: EventRollupScope.minute(of: k.time), receivedAt: receivedAt)
        }
    }

    /// Adds another delta's events (a request's, gathered before it queued).
    mutating func merge(_ other: EventRollupDelta) {
        precondition(grains == other.grains, "deltas of different grains")
        events += other.events
        hours.merge(other.hours)
        minutes.merge(other.minutes)
    }

    /// Adds the events of every stored batch `sql` selects (columns `receivedAt`, `keys`).
    mutating func addBatches(_ db: Database, sql: String, arguments: StatementArguments = []) throws {
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            let block = try StoredBlock(keysBlob: [UInt8](row["keys"] as Data), firstSeq: 0, receivedAt: row["receivedAt"])
            for (i, k) in block.keys.enumerated() { add(k, receivedAt: block.receivedAt(i)) }
        }
    }

    /// Adds the delta to the stored rollups (inside the caller's transaction). Minutes before
    /// the kept ones (``MinuteRollupHorizon``) are not written: no read uses them.
    func apply(_ db: Database) throws {
        if grains.contains(.hour) { try hours.apply(db, table: .hourly, from: .min) }
        if grains.contains(.minute) { try minutes.apply(db, table: .minutes, from: try MinuteRollupHorizon.read(db)) }
    }
}

/// The table pair one grain's rollups live in; the names are constants, never input.
struct RollupTables: Sendable {
    let counts: String
    let latencies: String
    /// The period column: `hour` for the hourly tables, `minute` for the minute ones.
    let period: String

    static let hourly = RollupTables(counts: "event_rollup", latencies: "event_latency_rollup", period: "hour")
    static let minutes = RollupTables(counts: "event_minute_rollup", latencies: "event_minute_latency_rollup", period: "minute")

    static func of(_ grain: EventRollupGrain) -> RollupTables {
        switch grain {
        case .hour: hourly
        case .minute: minutes
        }
    }
}

/// One grain's rollup rows of a delta: counts per (period, name, app, detail, status code,
/// outcome), duration sketches per (period, name, app, detail).
struct RollupCells: Sendable {
    /// The texts every cell of an event is keyed by, hashed once per event: the event's count
    /// and latency cells at both grains reuse the hash instead of hashing the three strings
    /// four times (string hashing was most of the rollup path's instructions,
    /// `scripts/callgrind.sh rollup`). Equality is still `String`'s, as before.
    struct Labels: Hashable {
        let name: String
        let appId: String
        let detail: String
        private let hash: Int

        init(_ k: RecordKeys) {
            (name, appId, detail) = (k.name, k.appId, k.detail)
            var hasher = Hasher()
            hasher.combine(name)
            hasher.combine(appId)
            hasher.combine(detail)
            hash = hasher.finalize()
        }

        static func == (a: Labels, b: Labels) -> Bool {
            a.hash == b.hash && a.name == b.name && a.appId == b.appId && a.detail == b.detail
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    struct CountKey: Hashable {
        var start: Int64
        var labels: Labels
        var statusCode: Int?
        var succeeded: Bool?
    }

    struct LatencyKey: Hashable {
        var start: Int64
        var labels: Labels
    }

    private(set) var counts: [CountKey: (count: Int, lastReceivedAt: Int64)] = [:]
    private(set) var latencies: [LatencyKey: (durations: LatencySketch, lastReceivedAt: Int64)] = [:]

    var isEmpty: Bool { counts.isEmpty && latencies.isEmpty }

    mutating func add(_ k: RecordKeys, labels: Labels, start: Int64, receivedAt: Int64) {
        let key = CountKey(start: start, labels: labels, statusCode: k.statusCode, succeeded: k.succeeded)
        Self.count(&counts[key, default: (0, receivedAt)], count: 1, receivedAt: receivedAt)
        if let d = k.durationMs, d.isFinite {
            let lkey = LatencyKey(start: start, labels: labels)
            Self.add(&latencies[lkey, default: (LatencySketch(), receivedAt)], duration: d, receivedAt: receivedAt)
        }
    }

    mutating func merge(_ other: RollupCells) {
        for (key, value) in other.counts {
            Self.count(&counts[key, default: (0, value.lastReceivedAt)], count: value.count, receivedAt: value.lastReceivedAt)
        }
        for (key, value) in other.latencies {
            Self.merge(&latencies[key, default: (LatencySketch(), value.lastReceivedAt)], value)
        }
    }

    // The cells are updated in place through `dictionary[key, default:]`: one hash of the
    // key's strings per record and grain instead of a lookup and a store (two), which the
    // commit path paid for every event it rolls up.

    private static func count(_ cell: inout (count: Int, lastReceivedAt: Int64), count: Int, receivedAt: Int64) {
        cell.count += count
        cell.lastReceivedAt = max(cell.lastReceivedAt, receivedAt)
    }

    private static func add(_ cell: inout (durations: LatencySketch, lastReceivedAt: Int64), duration: Double, receivedAt: Int64) {
        cell.durations.add(duration)
        cell.lastReceivedAt = max(cell.lastReceivedAt, receivedAt)
    }

    private static func merge(
        _ cell: inout (durations: LatencySketch, lastReceivedAt: Int64), _ other: (durations: LatencySketch, lastReceivedAt: Int64)
    ) {
        cell.durations.merge(other.durations)
        cell.lastReceivedAt = max(cell.lastReceivedAt, other.lastReceivedAt)
    }

    /// Adds the cells of periods starting at or after `from` to `table`'s rows.
    func apply(_ db: Database, table: RollupTables, from: Int64) throws {
        let period = table.period
        let upsert = try BoundStatement(
            db,
            sql: """
                INSERT INTO \(table.counts)(\(period), name, appId, detail, hasStatusCode, statusCode, outcome, count, lastReceivedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(\(period), name, appId, detail, hasStatusCode, statusCode, outcome)
                DO UPDATE SET count = count + excluded.count, lastReceivedAt = max(lastReceivedAt, excluded.lastReceivedAt)
                """)
        for (key, value) in counts where key.start >= from {
            try upsert.run {
                $0.add(key.start)
                $0.add(key.labels.name)
                $0.add(key.labels.appId)
                $0.add(key.labels.detail)
                $0.add(key.statusCode != nil)
                $0.add(key.statusCode ?? 0)
                $0.add(RollupOutcome.code(key.succeeded))
                $0.add(value.count)
                $0.add(value.lastReceivedAt)
            }
        }
        let existing = try db.cachedStatement(
            sql: "SELECT sketch, lastReceivedAt FROM \(table.latencies) WHERE \(period) = ? AND name = ? AND appId = ? AND detail = ?")
        let replace = try BoundStatement(
            db,
            sql:
                "INSERT OR REPLACE INTO \(table.latencies)(\(period), name, appId, detail, lastReceivedAt, sketch) VALUES (?, ?, ?, ?, ?, ?)"
        )
        for (key, value) in latencies where key.start >= from {
            var durations = value.durations
            var lastReceivedAt = value.lastReceivedAt
            if let row = try Row.fetchOne(existing, arguments: [key.start, key.labels.name, key.labels.appId, key.labels.detail]) {
                durations.merge(try LatencySketch(decoding: [UInt8](row["sketch"] as Data)))
                lastReceivedAt = max(lastReceivedAt, row["lastReceivedAt"] as Int64)
            }
            try replace.run {
                $0.add(key.start)
                $0.add(key.labels.name)
                $0.add(key.labels.appId)
                $0.add(key.labels.detail)
                $0.add(lastReceivedAt)
                $0.add(Data(durations.encoded()))
            }
        }
    }
}

/// The `outcome` column: the event's own `didSucceed`, with "not reported" as a value of its own.
enum RollupOutcome {
    static func code(_ succeeded: Bool?) -> Int {
        switch succeeded {
        case nil: 0
        case true?: 1
        case false?: 2
        }
    }

    static func succeeded(_ code: Int) -> Bool? {
        switch code {
        case 1: true
        case 2: false
        default: nil
        }
    }
}
