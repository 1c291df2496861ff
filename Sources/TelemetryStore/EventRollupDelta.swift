import Compression
import Foundation
import GRDB
import StoreCore
import TelemetryModel

/// The rollup rows a set of stored events adds, gathered in memory and then added to the
/// `event_rollup` and `event_latency_rollup` tables in the caller's transaction — the one
/// that makes the events visible, so rollups and records never disagree.
struct EventRollupDelta: Sendable {
    struct CountKey: Hashable {
        var hour: Int64
        var name: String
        var appId: String
        var detail: String
        var statusCode: Int?
        var succeeded: Bool?
    }

    struct LatencyKey: Hashable {
        var hour: Int64
        var name: String
        var appId: String
        var detail: String
    }

    private(set) var counts: [CountKey: (count: Int, lastReceivedAt: Int64)] = [:]
    private(set) var latencies: [LatencyKey: (durations: LatencySketch, lastReceivedAt: Int64)] = [:]
    /// Events added (those in ``EventRollupScope``).
    private(set) var events = 0

    var isEmpty: Bool { counts.isEmpty && latencies.isEmpty }

    /// Adds one stored event; events outside ``EventRollupScope`` are not rolled up.
    mutating func add(_ k: RecordKeys, receivedAt: Int64) {
        guard EventRollupScope.names.contains(k.name) else { return }
        events += 1
        let hour = EventRollupScope.hour(of: k.time)
        let key = CountKey(hour: hour, name: k.name, appId: k.appId, detail: k.detail, statusCode: k.statusCode, succeeded: k.succeeded)
        let c = counts[key]
        counts[key] = (c.map { $0.count + 1 } ?? 1, max(c?.lastReceivedAt ?? receivedAt, receivedAt))
        if let d = k.durationMs, d.isFinite {
            let lkey = LatencyKey(hour: hour, name: k.name, appId: k.appId, detail: k.detail)
            var entry = latencies[lkey] ?? (LatencySketch(), receivedAt)
            entry.durations.add(d)
            entry.lastReceivedAt = max(entry.lastReceivedAt, receivedAt)
            latencies[lkey] = entry
        }
    }

    /// Adds another delta's events (a request's, gathered before it queued).
    mutating func merge(_ other: EventRollupDelta) {
        events += other.events
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

    /// Adds the events of every stored batch `sql` selects (columns `receivedAt`, `keys`).
    mutating func addBatches(_ db: Database, sql: String, arguments: StatementArguments = []) throws {
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            let block = try StoredBlock(keysBlob: [UInt8](row["keys"] as Data), firstSeq: 0, receivedAt: row["receivedAt"])
            for (i, k) in block.keys.enumerated() { add(k, receivedAt: block.receivedAt(i)) }
        }
    }

    /// Adds the delta to the stored rollups (inside the caller's transaction).
    func apply(_ db: Database) throws {
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO event_rollup(hour, name, appId, detail, hasStatusCode, statusCode, outcome, count, lastReceivedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(hour, name, appId, detail, hasStatusCode, statusCode, outcome)
                DO UPDATE SET count = count + excluded.count, lastReceivedAt = max(lastReceivedAt, excluded.lastReceivedAt)
                """)
        for (key, value) in counts {
            try upsert.execute(arguments: [
                key.hour, key.name, key.appId, key.detail, key.statusCode != nil, key.statusCode ?? 0,
                RollupOutcome.code(key.succeeded), value.count, value.lastReceivedAt,
            ])
        }
        let existing = try db.cachedStatement(
            sql: "SELECT sketch, lastReceivedAt FROM event_latency_rollup WHERE hour = ? AND name = ? AND appId = ? AND detail = ?")
        let replace = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO event_latency_rollup(hour, name, appId, detail, lastReceivedAt, sketch) VALUES (?, ?, ?, ?, ?, ?)")
        for (key, value) in latencies {
            var durations = value.durations
            var lastReceivedAt = value.lastReceivedAt
            if let row = try Row.fetchOne(existing, arguments: [key.hour, key.name, key.appId, key.detail]) {
                durations.merge(try LatencySketch(decoding: [UInt8](row["sketch"] as Data)))
                lastReceivedAt = max(lastReceivedAt, row["lastReceivedAt"] as Int64)
            }
            try replace.execute(arguments: [key.hour, key.name, key.appId, key.detail, lastReceivedAt, Data(durations.encoded())])
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
