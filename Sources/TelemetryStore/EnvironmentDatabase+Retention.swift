import Foundation
import GRDB
import TelemetryModel

extension EnvironmentDatabase {
    /// Deletes batches past their age, then the oldest batches while the environment holds
    /// more than `maxBytes`, with their dedup ids, in one transaction. Batches are judged by
    /// receive time, so a device with a wrong clock cannot keep data forever or lose it early.
    func applyRetention(_ limits: RetentionPolicy.Limits, nowMs: Int64) async throws -> RetentionResult {
        try await pool.write { db in
            var result = RetentionResult()
            func delete(where condition: String, _ args: StatementArguments) throws {
                let rows = try Row.fetchAll(db, sql: "SELECT id, firstSeq, count, storedBytes FROM batch WHERE \(condition)", arguments: args)
                for row in rows {
                    let first: Int64 = row["firstSeq"]
                    let count: Int64 = row["count"]
                    try db.execute(sql: "DELETE FROM event_id WHERE seq >= ? AND seq < ?", arguments: [first, first + count])
                    try db.execute(sql: "DELETE FROM batch WHERE id = ?", arguments: [row["id"] as Int64])
                    result.batches += 1
                    result.records += Int(count)
                    result.bytes += row["storedBytes"] as Int64
                }
            }
            // kind 0 = events, 1 = logs; levelMask 1 = verbose-only batch.
            if let age = limits.eventsMaxAge {
                try delete(where: "kind = 0 AND receivedAt < ?", [nowMs - age * 1000])
            }
            if let age = limits.logsMaxAge {
                try delete(where: "kind = 1 AND receivedAt < ?", [nowMs - age * 1000])
            }
            if let age = limits.verboseLogsMaxAge {
                try delete(where: "kind = 1 AND levelMask = 1 AND receivedAt < ?", [nowMs - age * 1000])
            }
            if let maxBytes = limits.maxBytes {
                var total = try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(storedBytes), 0) FROM batch") ?? 0
                while total > maxBytes {
                    guard let oldest = try Row.fetchOne(db, sql: "SELECT id, storedBytes FROM batch ORDER BY id LIMIT 1") else { break }
                    try delete(where: "id = ?", [oldest["id"] as Int64])
                    total -= oldest["storedBytes"] as Int64
                }
            }
            try db.execute(sql: "DELETE FROM incident WHERE createdAt < ?", arguments: [nowMs - (limits.logsMaxAge ?? Int64.max / 2000) * 1000])
            return result
        }
    }
}
