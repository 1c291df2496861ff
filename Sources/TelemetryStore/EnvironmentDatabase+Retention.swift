import Compression
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
                result.verboseScrubbed += try Self.scrubVerbose(olderThan: nowMs - age * 1000, db: db)
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

extension EnvironmentDatabase {
    /// `levelMask` bit marking a batch whose verbose records were already scrubbed.
    static let verboseScrubbedBit = 1 << 4

    /// Verbose records share batches with other levels (records keep arrival order), so
    /// expiring them early rewrites those batches: each expired verbose record becomes a
    /// tombstone with the same id, time, app and device but no message, identity or other
    /// content — the PII-bearing part leaves on the shorter schedule, the rest of the batch
    /// and every id stay as they were. Returns how many records were scrubbed.
    static func scrubVerbose(olderThan cutoff: Int64, db: Database, level: Int32 = 6) throws -> Int {
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT id, keys, payload, levelMask FROM batch WHERE kind = 1 AND (levelMask & 1) = 1 AND (levelMask & ?) = 0 AND receivedAt < ?",
            arguments: [verboseScrubbedBit, cutoff])
        var scrubbed = 0
        for row in rows {
            var keys = try KeysBlock.decode(Inflate.decompress([UInt8](row["keys"] as Data), format: .zlib))
            let payload = try Inflate.decompress([UInt8](row["payload"] as Data), format: .zlib)
            var lines = payload.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
            guard lines.count == keys.count else { throw StoreError.corruptBlock("batch \(row["id"] as Int64) lines/keys mismatch") }
            for i in keys.indices where keys[i].level == .verbose {
                var w = JSONWriter(capacity: 160)
                w.beginObject()
                w.field("time", Timestamp.format(milliseconds: keys[i].time))
                w.field("level", "verbose")
                w.field("message", "[expired: verbose record past its retention]")
                w.field("appId", keys[i].appId)
                if !keys[i].deviceId.isEmpty { w.field("deviceId", keys[i].deviceId) }
                if !keys[i].incident.isEmpty { w.field("incident", keys[i].incident) }
                w.field("expired", true)
                w.endObject()
                lines[i] = w.bytes
                keys[i].identity = ""
                keys[i].detail = ""
                scrubbed += 1
            }
            var joined: [UInt8] = []
            for (n, line) in lines.enumerated() {
                if n > 0 { joined.append(0x0A) }
                joined.append(contentsOf: line)
            }
            let newPayload = try Deflate.compress(joined, level: level)
            let newKeys = try Deflate.compress(KeysBlock.encode(keys), level: level)
            try db.execute(
                sql: "UPDATE batch SET payload = ?, keys = ?, storedBytes = ?, levelMask = levelMask | ? WHERE id = ?",
                arguments: [Data(newPayload), Data(newKeys), newPayload.count + newKeys.count, verboseScrubbedBit, row["id"] as Int64])
        }
        return scrubbed
    }
}
