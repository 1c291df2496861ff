import Compression
import Foundation
import GRDB
import GRDBSQLite
import StoreCore
import TelemetryModel

/// One environment's event rollups: hourly counts and latency sketches kept beside the
/// batches, so stats over whole hours read no records. Stats read them and the records of
/// the rest of the window from one snapshot; retention and the spool expire them.
struct EnvironmentRollups: Sendable {
    let pool: DatabasePool
    /// Shared with the database's other readers: what reads of the batch table cost.
    let reads: ReadCounter

    /// Visits the input of a stats computation from one read snapshot: the rollup rows of the
    /// scan's whole hours, then the keys of every event in the rest of the window. Only rows
    /// whose times reach into that rest are read: a window of whole hours reads no records at
    /// all (a segment that merely overlaps its last hour, because it also holds newer records,
    /// used to have every key decoded to find none).
    func eventStats(_ scan: EventStatsScan, _ visit: @Sendable (EventStatsInput) -> Void) async throws {
        let reads = self.reads
        try await pool.read { db in
            // The parts of the window answered from records: before and after the rollup hours.
            var parts: [ClosedRange<Int64>] = []
            if let hours = scan.rollupHours, !hours.isEmpty {
                try Self.visitRollups(scan, hours: hours, db: db, visit)
                if scan.since < hours.lowerBound { parts.append(scan.since...(hours.lowerBound - 1)) }
                if hours.upperBound <= scan.until { parts.append(hours.upperBound...scan.until) }
            } else {
                parts.append(scan.since...scan.until)
            }
            guard !parts.isEmpty else { return }
            let rows = try BatchRows(columns: "keys", kind: 0, windows: parts, after: nil, through: nil, order: .asc, db: db)
            defer { reads.add(rows.finish()) }
            while let row = try rows.next() {
                let keys = try StoredBlock(keysBlob: [UInt8](row["keys"] as Data), firstSeq: 0, receivedAt: 0, app: scan.app).keys
                for k in keys where k.name == scan.name && parts.contains(where: { $0.contains(k.time) }) {
                    if let app = scan.app, k.appId != app { continue }
                    visit(.record(k))
                }
            }
        }
    }

    private static func visitRollups(
        _ scan: EventStatsScan, hours: Range<Int64>, db: Database, _ visit: @Sendable (EventStatsInput) -> Void
    ) throws {
        var filter = "hour >= ? AND hour < ? AND name = ?"
        var arguments: StatementArguments = [hours.lowerBound, hours.upperBound, scan.name]
        if let app = scan.app {
            filter += " AND appId = ?"
            arguments += [app]
        }
        // A 30-day window is tens of thousands of rows over a handful of apps and details:
        // their strings are made once each (read as bytes from SQLite and compared with the
        // ones already made), not once per row.
        var texts = RollupTexts()
        let counts = try db.makeStatement(
            sql: "SELECT hour, appId, detail, hasStatusCode, statusCode, outcome, count FROM event_rollup WHERE \(filter)")
        counts.arguments = arguments
        let countRows = try Row.fetchCursor(counts)
        while let row = try countRows.next() {
            visit(
                .counts(
                    EventRollup(
                        hour: row[0], name: scan.name, appId: texts.text(counts, 1), detail: texts.text(counts, 2),
                        statusCode: (row[3] as Bool) ? row[4] as Int : nil, succeeded: RollupOutcome.succeeded(row[5]),
                        count: row[6])))
        }
        let latencies = try db.makeStatement(
            sql: "SELECT hour, appId, detail, sketch FROM event_latency_rollup WHERE \(filter)")
        latencies.arguments = arguments
        let latencyRows = try Row.fetchCursor(latencies)
        while let row = try latencyRows.next() {
            visit(
                .durations(
                    EventLatencyRollup(
                        hour: row[0], name: scan.name, appId: texts.text(latencies, 1), detail: texts.text(latencies, 2),
                        durations: try LatencySketch(decoding: [UInt8](row[3] as Data)))))
        }
    }

    /// Recomputes every rollup row from the stored records, in one write transaction.
    func rebuild() async throws -> RollupRebuildResult {
        try await pool.write { db in try Self.rebuild(db) }
    }

    /// Replaces the rollups with what the stored event batches give. Counts of records that
    /// retention already removed are lost by a rebuild: the records are the only source.
    static func rebuild(_ db: Database) throws -> RollupRebuildResult {
        try db.execute(sql: "DELETE FROM event_rollup; DELETE FROM event_latency_rollup")
        var delta = EventRollupDelta()
        var events = 0
        // Applied in slices so a large store does not hold every row in memory at once.
        let sliceBatches: Int64 = 256
        var after: Int64 = -1
        while true {
            let last = try Int64.fetchOne(
                db, sql: "SELECT max(id) FROM (SELECT id FROM batch WHERE kind = 0 AND id > ? ORDER BY id LIMIT ?)",
                arguments: [after, sliceBatches])
            guard let last else { break }
            try delta.addBatches(
                db, sql: "SELECT receivedAt, keys FROM batch WHERE kind = 0 AND id > ? AND id <= ? ORDER BY id", arguments: [after, last])
            try delta.apply(db)
            events += delta.events
            delta = EventRollupDelta()
            after = last
        }
        return RollupRebuildResult(
            records: events, countRows: try Int.fetchOne(db, sql: "SELECT count(*) FROM event_rollup") ?? 0,
            latencyRows: try Int.fetchOne(db, sql: "SELECT count(*) FROM event_latency_rollup") ?? 0)
    }

    /// Deletes rollup rows no record was added to since `cutoff` (receive time, like batches).
    static func expire(before cutoff: Int64, db: Database) throws -> Int {
        try db.execute(sql: "DELETE FROM event_rollup WHERE lastReceivedAt < ?", arguments: [cutoff])
        var removed = db.changesCount
        try db.execute(sql: "DELETE FROM event_latency_rollup WHERE lastReceivedAt < ?", arguments: [cutoff])
        removed += db.changesCount
        return removed
    }
}

/// The text columns of the rollup rows as `String`s made once per distinct value: the
/// current row's bytes (straight from SQLite, no copy) are compared with the values already
/// made, and only a new value becomes a `String`.
private struct RollupTexts {
    private var known: [(bytes: [UInt8], text: String)] = []

    mutating func text(_ statement: Statement, _ column: Int32) -> String {
        // Text first, then its length (what SQLite's documentation asks for).
        guard let start = sqlite3_column_text(statement.sqliteStatement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement.sqliteStatement, column))
        guard count > 0 else { return "" }
        for entry in known where entry.bytes.count == count {
            if entry.bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, start, count) == 0 }) { return entry.text }
        }
        let bytes = Array(UnsafeBufferPointer(start: start, count: count))
        let text = String(decoding: bytes, as: UTF8.self)
        // Apps and details number in the tens; a table that still grows is not worth searching.
        if known.count < 64 { known.append((bytes, text)) }
        return text
    }
}
