import Foundation
import GRDB
import TelemetryModel

/// Merging adjacent small rows of one kind into segments (see ``Segment`` and ``Compactor``).
/// The expensive part (inflating the rows, encoding the segment) runs on a read snapshot;
/// the write transaction only checks that the rows are unchanged, deletes them and inserts
/// the segment, so a crash leaves either the rows or the segment and ingest never waits long.
/// One environment's; the ``Compactor`` service decides when and what to merge.
struct SegmentCompaction: Sendable {
    let pool: DatabasePool

    /// A row of `batch` as the compactor plans with it.
    struct CompactionCandidate: Sendable, Hashable {
        var id: Int64
        var firstSeq: Int64
        var count: Int
        var rawBytes: Int
        var storedBytes: Int
        var levelMask: Int
        var receivedAt: Int64
        var isSegment: Bool
    }

    struct CompactionOutcome: Sendable, Hashable {
        var rowsMerged = 0
        var records = 0
        var bytesBefore = 0
        var bytesAfter = 0
        /// The most inflated row payload the merge held at once (bytes of NDJSON or coded text).
        var peakInflatedBytes = 0
    }

    /// Rows of `kind` from `firstSeq` on, in id order, up to the first one received at or
    /// after `cutoff` (rows after it are not adjacent to older ones in a run).
    func candidates(kind: RecordKind, from firstSeq: Int64, receivedBefore cutoff: Int64) async throws
        -> [CompactionCandidate]
    {
        try await pool.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT id, firstSeq, count, rawBytes, storedBytes, levelMask, receivedAt, substr(keys, 1, 1) IN (?, ?) AS segment
                    FROM batch WHERE kind = ? AND firstSeq >= ? ORDER BY firstSeq
                    """,
                arguments: [Data([Segment.marker]), Data([GroupedSegment.marker]), kind.storedCode, firstSeq])
            var out: [CompactionCandidate] = []
            while let row = try rows.next() {
                let receivedAt: Int64 = row["receivedAt"]
                if receivedAt >= cutoff { break }
                out.append(
                    CompactionCandidate(
                        id: row["id"], firstSeq: row["firstSeq"], count: row["count"], rawBytes: row["rawBytes"],
                        storedBytes: row["storedBytes"], levelMask: row["levelMask"], receivedAt: receivedAt,
                        isSegment: row["segment"]))
            }
            return out
        }
    }

    /// Replaces `rows` (adjacent rows of `kind`, ascending) by one segment, unless one of
    /// them changed since it was read (retention deleted or scrubbed it): then nothing is
    /// written and nil is returned. `midMerge` runs inside the transaction after the rows are
    /// deleted and before the segment is inserted (a test seam: a crash there must leave the
    /// rows, as the transaction never commits).
    func compact(
        _ rows: [CompactionCandidate], kind: RecordKind, worker: BackgroundWorker,
        midMerge: @escaping @Sendable () throws -> Void = {}
    ) async throws -> CompactionOutcome? {
        guard let first = rows.first, let segmentId = rows.map(\.id).min() else { return nil }
        let ids = rows.map(\.id)
        let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        // Copied out of the rows inside the read, so the read runs off the cooperative pool
        // (GRDB's async read needs a Sendable result; rows are not).
        let blobs = try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT firstSeq, receivedAt, rawBytes, keys, payload FROM batch WHERE id IN (\(placeholders)) ORDER BY firstSeq",
                arguments: StatementArguments(ids)
            ).map {
                RowBlobs(
                    firstSeq: $0["firstSeq"], receivedAt: $0["receivedAt"], rawBytes: $0["rawBytes"],
                    keys: [UInt8]($0["keys"] as Data), payload: $0["payload"] as Data)
            }
        }
        guard blobs.count == rows.count else { return nil }
        let merged = try await worker.run { try Self.merge(blobs, candidates: rows) }
        let (keys, payload, rawBytes) = (merged.encoded.keys, merged.encoded.payload, merged.encoded.rawBytes)
        let storedBytes = keys.count + payload.count
        // The segment's receive time is its newest row's: age retention removes it when
        // that row's time comes, so older records in it stay up to the segment's span longer.
        let receivedAt = rows.map(\.receivedAt).max() ?? first.receivedAt
        let recordCount = merged.records
        let bounds = (min: merged.minTime, max: merged.maxTime)
        let mask = merged.levelMask
        let bloomBits = Data(merged.bloom)
        let peakInflated = merged.peakInflatedBytes
        return try await pool.write { db in
            let current = try Row.fetchAll(
                db, sql: "SELECT id, storedBytes, levelMask FROM batch WHERE id IN (\(placeholders)) ORDER BY firstSeq",
                arguments: StatementArguments(ids))
            guard current.count == rows.count,
                zip(current, rows).allSatisfy({
                    $0["id"] == $1.id && $0["storedBytes"] == $1.storedBytes && $0["levelMask"] == $1.levelMask
                })
            else { return nil }
            try db.execute(sql: "DELETE FROM batch WHERE id IN (\(placeholders))", arguments: StatementArguments(ids))
            try midMerge()
            // The oldest row's id: retention deletes by id order, oldest first, and the
            // segment holds data as old as that row's.
            try db.execute(
                sql: """
                    INSERT INTO batch(id, kind, firstSeq, count, minTime, maxTime, receivedAt, rawBytes, storedBytes, levelMask,
                                      bloom, keys, payload)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    segmentId, kind.storedCode, first.firstSeq, recordCount, bounds.min, bounds.max, receivedAt, rawBytes, storedBytes,
                    mask, bloomBits, Data(keys), Data(payload),
                ])
            return CompactionOutcome(
                rowsMerged: rows.count, records: recordCount, bytesBefore: rows.reduce(0) { $0 + $1.storedBytes },
                bytesAfter: storedBytes, peakInflatedBytes: peakInflated)
        }
    }
}

extension SegmentCompaction {
    /// The CPU side of a merge (on the compactor's low-priority worker): the rows' records
    /// in id order encoded as one grouped segment, with its Bloom filter, time bounds and
    /// level bits. Two passes keep what it holds to the run's keys, its compressed blobs, the
    /// groups' zlib state, column codes and output, and one row's text: the first decodes only
    /// the keys blobs (the groups are chosen from the whole run's counts per app), the second
    /// inflates one row at a time and streams its records into the groups' writers, letting
    /// the row and its keys go before the next. (Decoding each row's keys again in the second
    /// pass instead of holding the run's was measured twice without a gain in the heap:
    /// BENCHMARKS.md, issue 28.)
    fileprivate static func merge(_ rows: [RowBlobs], candidates: [CompactionCandidate]) throws -> MergedSegment {
        var blocks: [StoredBlock?] = []
        blocks.reserveCapacity(rows.count)
        var perApp: [String: Int] = [:]
        var bloom = BloomBuilder()
        var minTime = Int64.max
        var maxTime = Int64.min
        var records = 0
        // Level bits of every row; "verbose already scrubbed" only when it holds for every row
        // with verbose records, so none escapes the scrub.
        var levelMask = 0
        var scrubbed = EnvironmentRetention.verboseScrubbedBit
        for (n, candidate) in candidates.enumerated() {
            let block = try StoredBlock(keysBlob: rows[n].keys, firstSeq: rows[n].firstSeq, receivedAt: rows[n].receivedAt)
            for k in block.keys {
                perApp[k.appId, default: 0] += 1
                bloom.add(k)
                minTime = min(minTime, k.time)
                maxTime = max(maxTime, k.time)
            }
            records += block.keys.count
            blocks.append(block)
            levelMask |= candidate.levelMask & ~EnvironmentRetention.verboseScrubbedBit
            if candidate.levelMask & 1 != 0 { scrubbed &= candidate.levelMask }
        }
        var writer = GroupedSegment.Writer(recordsPerApp: perApp)
        var inflated = HeldBytes()
        for n in blocks.indices {
            guard let block = blocks[n].take() else { continue }
            // Slices of the row's inflated payload: no copy per line.
            let lines = try block.lines(rows[n].payload, rawBytes: rows[n].rawBytes)
            inflated.take(lines.byteCount)
            for i in block.keys.indices {
                try writer.append(id: block.id(i), receivedAt: block.receivedAt(i), keys: block.keys[i], json: lines.slice(i))
            }
            inflated.release(lines.byteCount)
        }
        return MergedSegment(
            encoded: try writer.finish(), records: records, bloom: bloom.filter().bits, minTime: minTime, maxTime: maxTime,
            levelMask: levelMask | scrubbed, peakInflatedBytes: inflated.peak)
    }
}

/// Inflated payload bytes a merge holds, and the most it held at once: the figure its
/// memory bound is stated (and tested) in.
private struct HeldBytes {
    private(set) var current = 0
    private(set) var peak = 0

    mutating func take(_ bytes: Int) {
        current += bytes
        peak = max(peak, current)
    }

    mutating func release(_ bytes: Int) { current -= bytes }
}

/// What a merge produced, handed from the worker back to the write transaction.
private struct MergedSegment: Sendable {
    var encoded: Segment.Encoded
    var records: Int
    var bloom: [UInt8]
    var minTime: Int64
    var maxTime: Int64
    var levelMask: Int
    var peakInflatedBytes: Int
}

/// A stored row's columns the compactor merges, read out of SQLite in one snapshot (still
/// compressed: a small share of what they inflate to).
private struct RowBlobs: Sendable {
    let firstSeq: Int64
    let receivedAt: Int64
    let rawBytes: Int
    let keys: [UInt8]
    let payload: Data
}
