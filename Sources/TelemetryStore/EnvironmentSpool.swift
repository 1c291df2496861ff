import Compression
import Foundation
import GRDB
import StoreCore
import TelemetryModel

/// One environment's database as a ClickHouse collector's spool: its committed batches wait
/// here until the forwarder has shipped them, and leave only by shipping.
struct EnvironmentSpool: Sendable {
    let env: TelemetryEnvironment
    let pool: DatabasePool
    let space: DatabaseSpace

    func unshippedBatches(after: Int64, limit: Int) async throws -> [SpoolBatch] {
        let env = self.env
        return try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT id, kind, firstSeq, count, receivedAt, storedBytes, keys, payload FROM batch WHERE id > ? ORDER BY id LIMIT ?",
                arguments: [after, limit])
            return try rows.map { row in
                let keys = try KeysBlock.decode(Inflate.decompress([UInt8](row["keys"] as Data), format: .zlib))
                let payload = try Inflate.decompress([UInt8](row["payload"] as Data), format: .zlib)
                let lines = payload.split(separator: 0x0A, omittingEmptySubsequences: false)
                let id: Int64 = row["id"]
                guard lines.count == keys.count, keys.count == row["count"] as Int else {
                    throw StoreError.corruptBlock("batch \(id) lines/keys mismatch")
                }
                return SpoolBatch(
                    env: env, batchID: id, kind: (row["kind"] as Int) == 0 ? .event : .log, firstSeq: row["firstSeq"],
                    receivedAt: row["receivedAt"], storedBytes: row["storedBytes"], keys: keys, records: lines,
                    eventIDs: Self.eventIDs(keys: keys, records: lines))
            }
        }
    }

    /// The retry identities to ship beside a batch: the `eventId` of each record that has one,
    /// read from the record as stored (`event_id` keeps only a hash of it, see ``RetryKey``),
    /// with its app, each up to its first NUL (``RetryIdentity``). Uploads' records are left
    /// out: their identity includes their incident.
    static func eventIDs(keys: [RecordKeys], records: [ArraySlice<UInt8>]) -> [SpooledEventID] {
        var out: [SpooledEventID] = []
        for (index, record) in records.enumerated() where keys[index].incident.isEmpty {
            guard let eventId = JSONMemberProbe.topLevelString(Array(record), member: "eventId") else { continue }
            out.append(
                SpooledEventID(index: index, appId: RetryIdentity.text(keys[index].appId), eventId: RetryIdentity.text(eventId)))
        }
        return out
    }

    /// Deletes shipped batches, in one transaction. Their records' dedup ids stay, so a client
    /// retry that arrives after shipping is still recognised instead of stored a second time
    /// under a new id; ``maintain(_:nowMs:)`` ages them out.
    func removeShipped(batchIDs: [Int64]) async throws {
        guard !batchIDs.isEmpty else { return }
        try await pool.write { db in
            for id in batchIDs {
                try db.execute(sql: "DELETE FROM batch WHERE id = ?", arguments: [id])
            }
        }
    }

    /// The spool's retention: never a batch (unshipped data leaves only by shipping), only
    /// bookkeeping that would otherwise grow forever. Dedup ids go once they are older than
    /// ``SpoolRetryWindow``, judged by `seq_mark`: every pass notes the highest seq now, and
    /// the ids at or below the newest mark older than the window were committed before it, so
    /// they go in one range delete on the seq index (an id lives between the window and the
    /// window plus one pass interval). Shipped incidents go after the logs age, rollups after
    /// their own.
    func maintain(_ limits: RetentionPolicy.Limits, nowMs: Int64) async throws -> RetentionResult {
        let cutoff = nowMs - SpoolRetryWindow.seconds * 1000
        var result = try await pool.write { db in
            var result = RetentionResult()
            let legacy = try LegacyRetryIds.exist(db)
            let highest = max(
                try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM event_id") ?? 0, legacy ? try LegacyRetryIds.maxSeq(db) ?? 0 : 0)
            try db.execute(sql: "INSERT OR REPLACE INTO seq_mark(at, seq) VALUES (?, ?)", arguments: [nowMs, highest])
            if let seq = try Int64.fetchOne(db, sql: "SELECT seq FROM seq_mark WHERE at <= ? ORDER BY at DESC LIMIT 1", arguments: [cutoff])
            {
                try db.execute(sql: "DELETE FROM event_id WHERE seq <= ?", arguments: [seq])
                result.retryIDs = db.changesCount
                if legacy {
                    result.retryIDs += try LegacyRetryIds.delete(through: seq, db)
                    try LegacyRetryIds.dropIfEmpty(db)
                }
                try db.execute(sql: "DELETE FROM seq_mark WHERE at <= ?", arguments: [cutoff])
            }
            if let age = limits.logsMaxAge {
                try db.execute(sql: "DELETE FROM incident WHERE shipped = 1 AND createdAt < ?", arguments: [nowMs - age * 1000])
            }
            result.rollupRows += try EnvironmentRollups.expire(
                before: limits.rollupsMaxAge.map { nowMs - $0 * 1000 }, nowMs: nowMs, db: db)
            // A spool's lookups are answered by ClickHouse; its index lives as long as its batches.
            try DeviceIndex.prune(db)
            return result
        }
        if result.retryIDs > 0 || result.rollupRows > 0 { result.bytesReturned = try await space.returnFreePages() }
        return result
    }

    func unshippedIncidents() async throws -> [Incident] {
        let env = self.env
        return try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM incident WHERE shipped = 0 ORDER BY createdAt").map {
                SQLiteRecordReader.incident($0, env: env)
            }
        }
    }

    func markIncidentsShipped(ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        try await pool.write { db in
            for id in ids { try db.execute(sql: "UPDATE incident SET shipped = 1 WHERE id = ?", arguments: [id]) }
        }
    }

    func depth() async throws -> SpoolDepth {
        try await pool.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT COALESCE(SUM(count), 0) AS n, COALESCE(SUM(storedBytes), 0) AS b, MIN(receivedAt) AS o FROM batch")
            return SpoolDepth(records: row?["n"] ?? 0, bytes: row?["b"] ?? 0, oldestReceivedAt: row?["o"])
        }
    }

    func unshippedBatchIDs() async throws -> ClosedRange<Int64>? {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT MIN(id) AS lo, MAX(id) AS hi FROM batch")
            guard let lo: Int64 = row?["lo"], let hi: Int64 = row?["hi"] else { return nil }
            return lo...hi
        }
    }
}
