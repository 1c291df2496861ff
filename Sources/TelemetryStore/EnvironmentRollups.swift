import Compression
import Foundation
import GRDB
import GRDBSQLite
import StoreCore
import TelemetryModel

/// One environment's event rollups: hourly and per-minute counts and latency sketches kept
/// beside the batches, so stats over whole minutes read no records. Stats read them and the
/// records of the rest of the window from one snapshot; retention and the spool expire them.
struct EnvironmentRollups: Sendable {
    let pool: DatabasePool
    /// Shared with the database's other readers: what reads of the batch table cost.
    let reads: ReadCounter

    /// Visits the input of a stats computation from one read snapshot: the rollup rows of the
    /// plan's hours and minutes (``EventStatsPlan``, with the minutes kept in this snapshot),
    /// then the keys of every event in the rest of the window. Only rows whose times reach
    /// into that rest are read: a window of whole minutes reads no records at all.
    func eventStats(_ scan: EventStatsScan, _ visit: @Sendable (EventStatsInput) -> Void) async throws {
        let reads = self.reads
        try await pool.read { db in
            let plan = EventStatsPlan(
                since: scan.since, until: scan.until, grain: scan.rollupGrain, minutesFrom: try MinuteRollupHorizon.read(db))
            var texts = RollupTexts()
            if let hours = plan.hours { try Self.visitRollups(scan, .hourly, hours, db: db, texts: &texts, visit) }
            for minutes in plan.minutes { try Self.visitRollups(scan, .minutes, minutes, db: db, texts: &texts, visit) }
            let parts = plan.records
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
        _ scan: EventStatsScan, _ table: RollupTables, _ periods: Range<Int64>, db: Database, texts: inout RollupTexts,
        _ visit: @Sendable (EventStatsInput) -> Void
    ) throws {
        let period = table.period
        var filter = "\(period) >= ? AND \(period) < ? AND name = ?"
        var arguments: StatementArguments = [periods.lowerBound, periods.upperBound, scan.name]
        if let app = scan.app {
            filter += " AND appId = ?"
            arguments += [app]
        }
        // A 30-day window is tens of thousands of rows over a handful of apps and details:
        // their strings are made once each (read as bytes from SQLite and compared with the
        // ones already made), not once per row.
        let counts = try db.makeStatement(
            sql: "SELECT \(period), appId, detail, hasStatusCode, statusCode, outcome, count FROM \(table.counts) WHERE \(filter)")
        counts.arguments = arguments
        let countRows = try Row.fetchCursor(counts)
        while let row = try countRows.next() {
            visit(
                .counts(
                    EventRollup(
                        start: row[0], name: scan.name, appId: texts.text(counts, 1), detail: texts.text(counts, 2),
                        statusCode: (row[3] as Bool) ? row[4] as Int : nil, succeeded: RollupOutcome.succeeded(row[5]),
                        count: row[6])))
        }
        let latencies = try db.makeStatement(
            sql: "SELECT \(period), appId, detail, sketch FROM \(table.latencies) WHERE \(filter)")
        latencies.arguments = arguments
        let latencyRows = try Row.fetchCursor(latencies)
        while let row = try latencyRows.next() {
            visit(
                .durations(
                    EventLatencyRollup(
                        start: row[0], name: scan.name, appId: texts.text(latencies, 1), detail: texts.text(latencies, 2),
                        durations: try LatencySketch(decoding: [UInt8](row[3] as Data)))))
        }
    }

    /// Recomputes every rollup row from the stored records, in one write transaction.
    func rebuild() async throws -> RollupRebuildResult {
        try await pool.write { db in try Self.rebuild(db) }
    }

    /// Replaces the rollups with what the stored event batches give: every hour, and the
    /// minutes from the current horizon on. Counts of records that retention already removed
    /// are lost by a rebuild: the records are the only source.
    static func rebuild(_ db: Database, grains: Set<EventRollupGrain> = Set(EventRollupGrain.allCases)) throws -> RollupRebuildResult {
        for grain in grains {
            let table = RollupTables.of(grain)
            try db.execute(sql: "DELETE FROM \(table.counts); DELETE FROM \(table.latencies)")
        }
        // Minute rows before the horizon are never written, so batches that end before it
        // are not read for them.
        let minutesFrom = grains.contains(.minute) ? try MinuteRollupHorizon.read(db) : .max
        let onlyAfter = grains.contains(.hour) ? Int64.min : minutesFrom
        var delta = EventRollupDelta(grains: grains)
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
                db, sql: "SELECT receivedAt, keys FROM batch WHERE kind = 0 AND id > ? AND id <= ? AND maxTime >= ? ORDER BY id",
                arguments: [after, last, onlyAfter])
            try delta.apply(db)
            events += delta.events
            delta = EventRollupDelta(grains: grains)
            after = last
        }
        /// The rows of the rebuilt grains' tables (the others may not exist yet in a migration).
        func rows(_ grain: EventRollupGrain, _ table: (RollupTables) -> String) throws -> Int {
            guard grains.contains(grain) else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table(.of(grain)))") ?? 0
        }
        return RollupRebuildResult(
            records: events, countRows: try rows(.hour, \.counts), latencyRows: try rows(.hour, \.latencies),
            minuteCountRows: try rows(.minute, \.counts), minuteLatencyRows: try rows(.minute, \.latencies))
    }

    /// Deletes hourly rollup rows no record was added to since `cutoff` (receive time, like
    /// batches), and the minute rows older than the kept minutes at `nowMs` (event time).
    static func expire(before cutoff: Int64?, nowMs: Int64, db: Database) throws -> Int {
        var removed = try MinuteRollupHorizon.advance(nowMs: nowMs, db: db)
        guard let cutoff else { return removed }
        for table in [RollupTables.hourly.counts, RollupTables.hourly.latencies] {
            try db.execute(sql: "DELETE FROM \(table) WHERE lastReceivedAt < ?", arguments: [cutoff])
            removed += db.changesCount
        }
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
