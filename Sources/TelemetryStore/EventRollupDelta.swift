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
        if grains.contains(.hour) { hours.add(k, start: EventRollupScope.hour(of: k.time), receivedAt: receivedAt) }
        if grains.contains(.minute) { minutes.add(k, start: EventRollupScope.minute(of: k.time), receivedAt: receivedAt) }
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
    struct CountKey: Hashable {
        var start: Int64
        var name: String
        var appId: String
        var detail: String
        var statusCode: Int?
        var succeeded: Bool?
    }

    struct LatencyKey: Hashable {
        var start: Int64
        var name: String
        var appId: String
        var detail: String
    }

    private(set) var counts: [CountKey: (count: Int, lastReceivedAt: Int64)] = [:]
    private(set) var latencies: [LatencyKey: (durations: LatencySketch, lastReceivedAt: Int64)] = [:]

    var isEmpty: Bool { counts.isEmpty && latencies.isEmpty }

    mutating func add(_ k: RecordKeys, start: Int64, receivedAt: Int64) {
        let key = CountKey(start: start, name: k.name, appId: k.appId, detail: k.detail, statusCode: k.statusCode, succeeded: k.succeeded)
        let c = counts[key]
        counts[key] = (c.map { $0.count + 1 } ?? 1, max(c?.lastReceivedAt ?? receivedAt, receivedAt))
        if let d = k.durationMs, d.isFinite {
            let lkey = LatencyKey(start: start, name: k.name, appId: k.appId, detail: k.detail)
            var entry = latencies[lkey] ?? (LatencySketch(), receivedAt)
            entry.durations.add(d)
            entry.lastReceivedAt = max(entry.lastReceivedAt, receivedAt)
            latencies[lkey] = entry
        }
    }

    mutating func merge(_ other: RollupCells) {
        for (key, value) in other.counts {
            let c = counts[key]
            counts[key] = ((c?.count ?? 0) + value.count, max(c?.lastReceivedAt ?? value.lastReceivedAt, value.lastReceivedAt))
        }
        for (key, value) in other.latencies {
            guard var entry = latencies[key] else {
                latencies[key] = value
                continue
            }
            entry.durations.merge(value.durations)
            entry.lastReceivedAt = max(entry.lastReceivedAt, value.lastReceivedAt)
            latencies[key] = entry
        }
    }

    /// Adds the cells of periods starting at or after `from` to `table`'s rows.
    func apply(_ db: Database, table: RollupTables, from: Int64) throws {
        let period = table.period
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO \(table.counts)(\(period), name, appId, detail, hasStatusCode, statusCode, outcome, count, lastReceivedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(\(period), name, appId, detail, hasStatusCode, statusCode, outcome)
                DO UPDATE SET count = count + excluded.count, lastReceivedAt = max(lastReceivedAt, excluded.lastReceivedAt)
                """)
        for (key, value) in counts where key.start >= from {
            try upsert.execute(arguments: [
                key.start, key.name, key.appId, key.detail, key.statusCode != nil, key.statusCode ?? 0,
                RollupOutcome.code(key.succeeded), value.count, value.lastReceivedAt,
            ])
        }
        let existing = try db.cachedStatement(
            sql: "SELECT sketch, lastReceivedAt FROM \(table.latencies) WHERE \(period) = ? AND name = ? AND appId = ? AND detail = ?")
        let replace = try db.cachedStatement(
            sql:
                "INSERT OR REPLACE INTO \(table.latencies)(\(period), name, appId, detail, lastReceivedAt, sketch) VALUES (?, ?, ?, ?, ?, ?)"
        )
        for (key, value) in latencies where key.start >= from {
            var durations = value.durations
            var lastReceivedAt = value.lastReceivedAt
            if let row = try Row.fetchOne(existing, arguments: [key.start, key.name, key.appId, key.detail]) {
                durations.merge(try LatencySketch(decoding: [UInt8](row["sketch"] as Data)))
                lastReceivedAt = max(lastReceivedAt, row["lastReceivedAt"] as Int64)
            }
            try replace.execute(arguments: [key.start, key.name, key.appId, key.detail, lastReceivedAt, Data(durations.encoded())])
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
