import Compression
import Foundation
import GRDB
import StoreCore
import TelemetryModel

/// One environment's retention: deleting what is past its age or over the size cap, in
/// ``RetentionClass`` order, and scrubbing verbose records early. It shares the database
/// pool with the other jobs and asks the space to give freed pages back.
///
/// Deletions run in steps of at most ``recordsPerStep`` records, each its own write
/// transaction. SQLite has one writer: a pass that deleted a growth step of a 1 GB cap
/// (about 140,000 records and their dedup ids) in one transaction held it for seconds, the
/// group commits queued behind it, and the records they held were the highest of the
/// daemon's memory peaks under steady load (the 2-hour soaks of BENCHMARKS.md: with steps,
/// no commit waited over 2.5 s, against up to 5 s). Between steps the waiting commits
/// go through. Nothing needs the pass to be atomic: a reader sees a store with some of the
/// oldest batches gone. The deleted records' dedup ids are left to ``RetryIdSweep``, which
/// prunes them in key order at the timer's passes (and a growth pass once they add up).
struct EnvironmentRetention: Sendable {
    let pool: DatabasePool
    let space: DatabaseSpace
    /// Records one step deletes at most (the batch that passes it is deleted whole).
    let recordsPerStep: Int

    /// Records per step by default: in the 2-hour soak a step, with the commits that went
    /// through beside it, took about 270 ms on this project's 2-core reference machine.
    static let defaultRecordsPerStep = 8_192

    init(pool: DatabasePool, space: DatabaseSpace, recordsPerStep: Int = Self.defaultRecordsPerStep) {
        self.pool = pool
        self.space = space
        self.recordsPerStep = max(1, recordsPerStep)
    }

    /// Deletes batches past their age (their events stay counted in the rollups, which have an
    /// age of their own); sweeps the deleted records' dedup ids when that is due
    /// (``RetryIdSweep``: always on a pass with `returnFreeSpace`); then — while the database
    /// holds more than `maxBytes` — the oldest batches in ``RetentionClass`` order; then, when
    /// `returnFreeSpace`, gives the freed pages back to the filesystem (moving live pages into
    /// the holes costs about what was deleted, so passes that run as the store grows leave the
    /// pages for the next commits instead). Batches are judged by receive time, so a device
    /// with a wrong clock cannot keep data forever or lose it early.
    func apply(_ limits: RetentionPolicy.Limits, nowMs: Int64, returnFreeSpace: Bool = true) async throws -> RetentionResult {
        var result = RetentionResult()
        if let age = limits.eventsMaxAge {
            result += try await deleteInSteps(where: "kind = 0 AND receivedAt < ?", [nowMs - age * 1000])
        }
        if let age = limits.logsMaxAge {
            result += try await deleteInSteps(where: "kind = 1 AND receivedAt < ?", [nowMs - age * 1000])
        }
        if let age = limits.verboseLogsMaxAge {
            let cutoff = nowMs - age * 1000
            result += try await deleteInSteps(where: "\(RetentionClass.verboseLogs.condition) AND receivedAt < ?", [cutoff])
            result.verboseScrubbed += try await pool.write { db in try Self.scrubVerbose(olderThan: cutoff, db: db) }
        }
        result.rollupRows += try await pool.write { db in
            try EnvironmentRollups.expire(before: limits.rollupsMaxAge.map { nowMs - $0 * 1000 }, nowMs: nowMs, db: db)
        }
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM incident WHERE createdAt < ?", arguments: [nowMs - (limits.logsMaxAge ?? Int64.max / 2000) * 1000])
            try DeviceIndex.prune(db)
            if try LegacyRetryIds.exist(db) { try LegacyRetryIds.sweep(db) }
        }
        result.retryIDs += try await RetryIdSweep.runIfDue(pool, tidy: returnFreeSpace)
        // The size cap last of the deletions: each of the steps before waits for the writer
        // behind queued commits, and what those commits add is measured here, so the pass
        // ends with the store a step below its cap rather than above it.
        if let maxBytes = limits.maxBytes {
            result += try await deleteForSizeCap(maxBytes)
        }
        if returnFreeSpace, result.batches > 0 || result.verboseScrubbed > 0 || result.retryIDs > 0 {
            result.bytesReturned = try await space.returnFreePages()
        }
        return result
    }

    /// The receive time of the oldest batch of `retentionClass`, nil when there is none:
    /// how retention picks the environment to take from when space runs short.
    func oldestReceivedAt(_ retentionClass: RetentionClass) async throws -> Int64? {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT MIN(receivedAt) FROM batch WHERE \(retentionClass.condition)")
        }
    }

    /// Deletes the oldest batches of `retentionClass` until at least `bytes` stored bytes are
    /// gone (at least one batch when any exists), then gives the pages back.
    func deleteOldest(_ retentionClass: RetentionClass, atLeast bytes: Int64) async throws -> RetentionResult {
        var result = try await deleteInSteps(where: retentionClass.condition, [], oldestFirst: true, atLeast: bytes)
        guard result.batches > 0 else { return result }
        result.retryIDs += try await RetryIdSweep.runIfDue(pool, tidy: true)
        result.bytesReturned = try await space.returnFreePages()
        return result
    }

    /// Deletes the batches matching `condition` in steps, until none is left or, given
    /// `bytes`, at least that many stored bytes are gone.
    private func deleteInSteps(
        where condition: String, _ arguments: StatementArguments, oldestFirst: Bool = false, atLeast bytes: Int64 = .max
    ) async throws -> RetentionResult {
        var result = RetentionResult()
        while result.bytes < bytes {
            let remaining = bytes - result.bytes
            let step = try await pool.write { [recordsPerStep] db in
                try Self.deleteBatches(
                    where: condition, arguments, oldestFirst: oldestFirst, records: recordsPerStep, bytes: remaining, db: db)
            }
            if step.batches == 0 { break }
            result += step
        }
        return result
    }

    /// Deletes in ``RetentionClass`` order until the database's live pages fit in `maxBytes`
    /// less one growth step (``RetentionPolicy/growthStep``): the next growth pass then runs
    /// as the store reaches the cap rather than a step past it, so the cap is passed only by
    /// what commits while a pass runs. Each step measures the live pages again, commits
    /// that went through between steps included. When the ids of records already deleted
    /// (``RetryIdSweep``) would free as much as is over, they are swept instead of deleting
    /// more records: otherwise a pass at the cap would delete records to make room that dead
    /// ids hold.
    private func deleteForSizeCap(_ maxBytes: Int64) async throws -> RetentionResult {
        var result = RetentionResult()
        let target = maxBytes - RetentionPolicy.growthStep(of: maxBytes)
        // The stale ids: counted on the index at the start, then raised by each step's records
        // (an upper bound: a record without an eventId has none).
        var stale = try await RetryIdSweep.plan(pool).stale
        for retentionClass in RetentionClass.allCases {
            while true {
                let (step, sweep) = try await pool.write { [recordsPerStep, stale] db -> (RetentionResult, Bool) in
                    let used = try DatabaseSpace.usedBytes(db)
                    guard used > target else { return (RetentionResult(), false) }
                    if Int64(stale) * RetryIdSweep.bytesPerId >= used - target { return (RetentionResult(), true) }
                    return (
                        try Self.deleteBatches(
                            where: retentionClass.condition, [], oldestFirst: true, records: recordsPerStep, bytes: used - target, db: db),
                        false
                    )
                }
                if sweep {
                    result.retryIDs += try await RetryIdSweep.run(pool, below: RetryIdSweep.plan(pool).bounds)
                    stale = 0
                    continue
                }
                if step.batches == 0 { break }
                stale += step.records
                result += step
            }
        }
        return result
    }

    /// Deletes batches matching `condition` (the oldest first when `oldestFirst`), up to and
    /// including the batch that reaches `records` records or `bytes` stored bytes: at least one
    /// batch when any matches. Their dedup ids stay for ``RetryIdSweep``, except text ids of a
    /// store from before ``RetryKey`` (``LegacyRetryIds``), which go with their batch: only the
    /// head of the row's keys blob is read for them (a segment's id span is in its first
    /// bytes). The rows are read before anything is deleted.
    private static func deleteBatches(
        where condition: String, _ arguments: StatementArguments, oldestFirst: Bool, records: Int, bytes: Int64, db: Database
    ) throws -> RetentionResult {
        var rows: [Row] = []
        let cursor = try Row.fetchCursor(
            db,
            sql: """
                SELECT id, kind, firstSeq, count, storedBytes, substr(keys, 1, \(StoredBlock.idSpanHeadBytes)) AS head
                FROM batch WHERE \(condition)\(oldestFirst ? " ORDER BY id" : "")
                """,
            arguments: arguments)
        var (recordCount, byteCount): (Int, Int64) = (0, 0)
        while recordCount < records, byteCount < bytes, let row = try cursor.next() {
            rows.append(row.copy())
            recordCount += row["count"] as Int
            byteCount += row["storedBytes"] as Int64
        }
        var result = RetentionResult()
        let legacy = try LegacyRetryIds.exist(db)
        for row in rows {
            let count: Int64 = row["count"]
            if legacy {
                // A segment's ids have the other kind's in between: its span, of its own kind.
                let ids = try StoredBlock.idSpan(keysBlob: [UInt8](row["head"] as Data), firstSeq: row["firstSeq"], count: count)
                try LegacyRetryIds.delete(kind: row["kind"], seqs: ids, db)
            }
            try db.execute(sql: "DELETE FROM batch WHERE id = ?", arguments: [row["id"] as Int64])
            result.batches += 1
            result.records += Int(count)
            result.bytes += row["storedBytes"] as Int64
        }
        return result
    }

    /// `levelMask` bit marking a batch whose verbose records were already scrubbed.
    static let verboseScrubbedBit = 1 << 4

    /// Verbose records share batches with other levels (records keep arrival order), so
    /// expiring them early rewrites those batches: each expired verbose record becomes a
    /// tombstone with the same id, time, app and device but no message, identity or other
    /// content — the PII-bearing part leaves on the shorter schedule, the rest of the batch
    /// and every id stay as they were. Returns how many records were scrubbed.
    static func scrubVerbose(olderThan cutoff: Int64, db: Database, level: Int32 = 6) throws -> Int {
        // One row in memory at a time: a day of verbose batches can be gigabytes.
        let ids = try Int64.fetchAll(
            db, sql: "SELECT id FROM batch WHERE kind = 1 AND (levelMask & 1) = 1 AND (levelMask & ?) = 0 AND receivedAt < ?",
            arguments: [verboseScrubbedBit, cutoff])
        var scrubbed = 0
        for id in ids {
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT id, firstSeq, receivedAt, keys, payload, rawBytes, levelMask FROM batch WHERE id = ?", arguments: [id])
            else { continue }
            let block = try StoredBlock(keysBlob: [UInt8](row["keys"] as Data), firstSeq: row["firstSeq"], receivedAt: row["receivedAt"])
            var keys = block.keys
            let stored = try block.lines(row["payload"] as Data, rawBytes: row["rawBytes"])
            var lines = keys.indices.map { stored.line($0) }
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
            let newPayload: [UInt8]
            let newKeys: [UInt8]
            // `rawBytes` follows the rewritten payload: readers inflate at that size, and the
            // compactor plans merges by it.
            let newRawBytes: Int
            if block.isSegment {
                let records = lines.indices.map { i in
                    Segment.Record(id: block.id(i), receivedAt: block.receivedAt(i), keys: keys[i], json: lines[i][...])
                }
                let encoded = try GroupedSegment.encode(records)
                (newKeys, newPayload, newRawBytes) = (encoded.keys, encoded.payload, encoded.rawBytes)
            } else {
                newPayload = try Deflate.compress(joined, level: level)
                newKeys = try Deflate.compress(KeysBlock.encode(keys), level: level)
                newRawBytes = joined.count
            }
            try db.execute(
                sql: "UPDATE batch SET payload = ?, keys = ?, rawBytes = ?, storedBytes = ?, levelMask = levelMask | ? WHERE id = ?",
                arguments: [
                    Data(newPayload), Data(newKeys), newRawBytes, newPayload.count + newKeys.count, verboseScrubbedBit, row["id"] as Int64,
                ])
        }
        return scrubbed
    }
}
