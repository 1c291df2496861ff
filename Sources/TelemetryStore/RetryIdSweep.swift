import Foundation
import GRDB

/// Prunes the retry ids (`event_id`) of records retention deleted, by walking the id table in
/// key order, instead of deleting each batch's ids with the batch.
///
/// The ids are keyed hashes (``RetryKey``), so one batch's ids lie on as many pages as it has
/// ids: deleting them batch by batch dirtied a page of the table for nearly every id, and
/// each step of a pass wrote those pages to the WAL again (a growth pass of the soak at a
/// 1 GB cap deleted 310,000-640,000 records; the A/B in BENCHMARKS.md, issue 28, measured
/// what the sweep changed in memory and writes). A sweep visits the table in key order, a
/// sixteenth of the key space per write transaction, and deletes every stale id on the way,
/// so each page is written at most once per sweep however many of its ids went: the cost
/// follows the table's size, not the number of ids deleted.
///
/// An id is stale when its seq is below the oldest record of its kind still stored (or staged
/// by a commit that spans both environments): retention deletes each kind oldest first, so
/// that is every id whose record is gone. An id whose record went out of order (a segment
/// that outlived a younger batch by its receive span) stays until the older one goes; it can
/// only make a retry of a deleted record answer `duplicate` a little longer, never let a
/// stored record be stored twice. Ids of a ClickHouse spool are the spool's own business
/// (``EnvironmentSpool``, which keeps them for the retry window after shipping).
enum RetryIdSweep {
    /// Write transactions one sweep is cut into, each over an equal range of the key space: the
    /// group commits waiting for the writer go through between them.
    static let steps = 16

    /// Stale ids below which a pass that would not sweep anyway (a growth pass) leaves them
    /// for later; above it, or above an eighth of the records stored, it sweeps, so the table
    /// carries at most about that share of dead ids between timer passes.
    static let minimumStale = 65_536

    /// Per kind (events, logs), the seq below which every id is stale.
    struct Bounds: Sendable, Hashable {
        var events: Int64
        var logs: Int64
    }

    /// Bytes one id takes in the table and its seq index (measured with GUID eventIds,
    /// BENCHMARKS.md): what sweeping `n` stale ids is expected to free, for the size cap.
    static let bytesPerId: Int64 = 57

    /// What a sweep would delete now: the bounds, the ids stale since the last sweep, and the
    /// records stored.
    struct Plan: Sendable {
        var bounds: Bounds
        var stale: Int
        var stored: Int
    }

    /// Plans on a read snapshot, off the writer: bounds from an older snapshot are lower, so
    /// still safe (seqs only grow, and a staged record's are at or above the next seq).
    static func plan(_ pool: DatabasePool) async throws -> Plan {
        try await pool.read { db in
            let bounds = try Bounds(events: staleBelow(kind: 0, db), logs: staleBelow(kind: 1, db))
            return Plan(
                bounds: bounds, stale: try staleSinceLastSweep(bounds, db),
                stored: try Int.fetchOne(db, sql: "SELECT CAST(total(count) AS INTEGER) FROM batch") ?? 0)
        }
    }

    /// Sweeps when it is due: on a pass that tidies up (`tidy`: the timer's passes, the disk
    /// guard's, one asked for) whenever an id has gone stale since the last sweep, otherwise
    /// once the stale ids reach ``minimumStale`` or an eighth of the records stored. Returns
    /// the ids deleted.
    static func runIfDue(_ pool: DatabasePool, tidy: Bool) async throws -> Int {
        let plan = try await plan(pool)
        guard plan.stale > 0, tidy || plan.stale >= max(minimumStale, plan.stored / 8) else { return 0 }
        return try await run(pool, below: plan.bounds)
    }

    /// Deletes every id below `bounds`, in ``steps`` write transactions, and notes the bounds
    /// as swept. Returns how many ids went. Bounds once safe stay safe: every record committed
    /// or staged later has a seq at or above the next seq they were computed with.
    static func run(_ pool: DatabasePool, below bounds: Bounds) async throws -> Int {
        var deleted = 0
        for step in 0..<steps {
            deleted += try await pool.write { db in
                let range = keyRange(step: step)
                try db.execute(sql: deleteStaleIds, arguments: [range.lower, range.upper, bounds.events, bounds.logs])
                let changes = db.changesCount
                if step == steps - 1 {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO meta(key, value) VALUES ('retryIdsSweptEvents', ?), ('retryIdsSweptLogs', ?)",
                        arguments: [bounds.events, bounds.logs])
                }
                return changes
            }
        }
        return deleted
    }

    /// The statement of one step: a range of the primary key, and the seq bound of the row's
    /// kind. The bound is a `CASE` on the row's kind rather than one test per kind joined by
    /// `OR`, which SQLite can answer from the seq index instead, visiting the ids in seq order
    /// at one random page of the table each: the cost the sweep is there to avoid. Kinds other
    /// than events (0) and logs (1) are never deleted.
    static let deleteStaleIds = """
        DELETE FROM event_id
        WHERE key >= ? AND key < ? AND seq < (CASE kind WHEN 0 THEN ? WHEN 1 THEN ? ELSE 0 END)
        """

    /// The key range of `step`: keys whose first byte is in its share of 0...255. Blobs compare
    /// byte by byte and a prefix sorts first, so the one-byte bounds take in every 16-byte key
    /// that begins with a byte of the range; the last step's upper bound is above any key.
    static func keyRange(step: Int) -> (lower: Data, upper: Data) {
        let first = step * 256 / steps
        let next = (step + 1) * 256 / steps
        return (Data([UInt8(first)]), next > 255 ? Data(repeating: 0xFF, count: 17) : Data([UInt8(next)]))
    }

    /// The lowest seq of `kind` that a stored or staged record may still have: ids below it
    /// belong to deleted records. The next seq when nothing of the kind is stored or staged.
    static func staleBelow(kind: Int, _ db: Database) throws -> Int64 {
        let next = try BatchCommitter.nextSeq(db)
        let stored = try Int64.fetchOne(db, sql: "SELECT min(firstSeq) FROM batch WHERE kind = ?", arguments: [kind])
        // A staged batch holds its ids before its rows are published: any kind's bounds it.
        let staged = try Int64.fetchOne(db, sql: "SELECT min(firstSeq) FROM staged_batch")
        return min(next, stored ?? next, staged ?? next)
    }

    /// Ids that went stale since the last sweep: those between its bounds and `bounds`, counted
    /// on the seq index (a range as long as what retention deleted since).
    static func staleSinceLastSweep(_ bounds: Bounds, _ db: Database) throws -> Int {
        let swept = try Dictionary(
            Row.fetchAll(db, sql: "SELECT key, value FROM meta WHERE key IN ('retryIdsSweptEvents', 'retryIdsSweptLogs')").map {
                ($0["key"] as String, $0["value"] as Int64)
            }, uniquingKeysWith: { a, _ in a })
        var stale = 0
        for (kind, from, below) in [
            (0, swept["retryIdsSweptEvents"] ?? 0, bounds.events), (1, swept["retryIdsSweptLogs"] ?? 0, bounds.logs),
        ]
        where below > from {
            stale +=
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM event_id INDEXED BY event_key_seq WHERE seq >= ? AND seq < ? AND kind = ?",
                    arguments: [from, below, kind]) ?? 0
        }
        return stale
    }
}
