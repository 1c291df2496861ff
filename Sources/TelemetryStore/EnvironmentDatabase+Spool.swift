import Compression
import Foundation
import GRDB
import TelemetryModel

extension EnvironmentDatabase {
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
                    receivedAt: row["receivedAt"], storedBytes: row["storedBytes"], keys: keys, records: lines)
            }
        }
    }

    /// Deletes shipped batches with the dedup ids of their records, in one transaction.
    func removeShipped(batchIDs: [Int64]) async throws {
        guard !batchIDs.isEmpty else { return }
        try await pool.write { db in
            for id in batchIDs {
                guard let row = try Row.fetchOne(db, sql: "SELECT firstSeq, count FROM batch WHERE id = ?", arguments: [id]) else {
                    continue
                }
                let first: Int64 = row["firstSeq"]
                let count: Int64 = row["count"]
                try db.execute(sql: "DELETE FROM event_id WHERE seq >= ? AND seq < ?", arguments: [first, first + count])
                try db.execute(sql: "DELETE FROM batch WHERE id = ?", arguments: [id])
            }
        }
    }

    func unshippedIncidents() async throws -> [Incident] {
        let env = self.env
        return try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM incident WHERE shipped = 0 ORDER BY createdAt").map { row in
                Incident(
                    id: row["id"], guid: row["guid"], env: env, appId: row["appId"], deviceId: row["deviceId"],
                    sessionId: row["sessionId"], identity: row["identity"], description: row["description"],
                    createdAt: row["createdAt"], recordCount: row["recordCount"], firstTime: row["firstTime"],
                    lastTime: row["lastTime"])
            }
        }
    }

    func markIncidentsShipped(ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        try await pool.write { db in
            for id in ids { try db.execute(sql: "UPDATE incident SET shipped = 1 WHERE id = ?", arguments: [id]) }
        }
    }

    func spoolDepth() async throws -> SpoolDepth {
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
