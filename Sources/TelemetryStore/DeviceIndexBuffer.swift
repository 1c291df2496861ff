import Foundation
import GRDB
import Synchronization
import TelemetryModel

/// The device sightings of recent commits that are not in `device_index` yet, written every
/// few seconds in the transaction of one commit instead of a few in every commit.
///
/// Why: a pair seen for the first time this hour is an upsert at a random page of the index,
/// and every commit writes each page it touched to the WAL again; written together, a page
/// takes the pairs of seconds of commits at once. On data where nearly every device is new
/// that is about 12% less CPU per record of ingest (BENCHMARKS.md, "Embedded ingest: device
/// sightings out of the commit").
///
/// What holds it together: every record with a seq up to `meta.deviceIndexThrough` is in the
/// index; the later ones are here (or in the batches, after a crash: `catchUp` reads them
/// back at open). The buffer changes only in the writer's transactions, and only when they
/// commit (a rolled-back commit leaves it as it was). A device lookup writes the buffer
/// first (`flush`), so it sees every record acknowledged before it started.
final class DeviceIndexBuffer: Sendable {
    /// How long sightings wait for a commit that writes them, at most while commits run.
    static let flushIntervalMs: Int64 = 5_000
    /// How many pairs make a commit write them sooner.
    static let flushPairs = 100_000

    /// The pairs already in the index this hour, so a device that sends all day is buffered
    /// (and written) once an hour, not once per commit.
    let cache: DeviceIndexCache

    private struct State {
        var pending = DeviceSightings()
        /// The newest seq the pending sightings (with the index) account for.
        var through: Int64
        /// When a commit last wrote the buffer (`.min`: the next commit starts the interval).
        var lastWriteMs: Int64
    }

    private let state: Mutex<State>

    /// `through`: the watermark after `catchUp`. The first commit starts the interval.
    init(through: Int64, cache: DeviceIndexCache = DeviceIndexCache()) {
        self.cache = cache
        state = Mutex(State(through: through, lastWriteMs: .min))
    }

    /// How many pairs wait for a write.
    var pendingPairs: Int { state.withLock { $0.pending.count } }

    /// Inside a commit's transaction: adds the devices of the records it wrote (seqs up to
    /// `through`), and writes everything buffered with them when it is due. The buffer is
    /// changed in place when the transaction commits (not copied per commit: it holds up to
    /// `flushPairs` pairs).
    func add(_ sightings: DeviceSightings, through: Int64, nowMs: Int64, db: Database) throws {
        let fresh = sightings.unknown(to: cache)
        let (pending, lastWrite) = state.withLock { ($0.pending.count, $0.lastWriteMs) }
        let due = pending + fresh.count >= Self.flushPairs || (lastWrite != .min && nowMs - lastWrite >= Self.flushIntervalMs)
        if due {
            try fresh.apply(db)
            try write(through: through, nextInterval: nowMs, db: db)
        }
        db.afterNextTransaction { [self] _ in
            cache.remember(fresh)
            state.withLock { s in
                if !due { s.pending.merge(fresh) }
                s.through = through
                if s.lastWriteMs == .min { s.lastWriteMs = nowMs }
            }
        }
    }

    /// Writes what is buffered, in its own transaction, if anything is (device lookups, so
    /// that they see every record acknowledged before them).
    func flush(_ pool: DatabasePool) async throws {
        guard pendingPairs > 0 else { return }
        try await pool.write { [self] db in
            try write(through: state.withLock { $0.through }, nextInterval: .min, db: db)
        }
    }

    /// Upserts the buffer and moves the watermark to `through` in the caller's transaction;
    /// the buffer empties when it commits, and the next interval starts at `nextInterval`.
    /// Sightings whose records retention deleted while they waited are dropped, as the index
    /// prune would have dropped their rows.
    private func write(through: Int64, nextInterval: Int64, db: Database) throws {
        let horizon = try DeviceIndex.pruneHorizon(db)
        try state.withLock { s in try s.pending.apply(db, since: horizon) }
        try Self.setWatermark(through, db: db)
        db.afterNextTransaction { [self] _ in
            state.withLock { s in
                s.pending = DeviceSightings()
                s.through = through
                s.lastWriteMs = nextInterval
            }
        }
    }

    static let watermarkKey = "deviceIndexThrough"

    static func watermark(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [watermarkKey]) ?? 0
    }

    static func setWatermark(_ seq: Int64, db: Database) throws {
        try db.execute(
            sql: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            arguments: [watermarkKey, seq])
    }

    /// At open: indexes the records past the watermark (what a crash or a stop left in the
    /// buffer) from their batches, and returns the new watermark. Reads only the batches
    /// from the last one that starts at or before the watermark on (batches of a kind never
    /// overlap, so no earlier one holds a later seq), by the (kind, firstSeq) index.
    static func catchUp(_ db: Database) throws -> Int64 {
        let through = try watermark(db)
        let newest = try BatchCommitter.nextSeq(db) - 1
        guard newest > through else { return through }
        var sightings = DeviceSightings()
        for kind in RecordKind.allCases.map(\.storedCode) {
            let from =
                try Int64.fetchOne(
                    db, sql: "SELECT max(firstSeq) FROM batch WHERE kind = ? AND firstSeq <= ?", arguments: [kind, through]) ?? 0
            // Not `firstSeq + count`: a compacted segment's ids skip the other kind's.
            try sightings.addBatches(
                db, sql: "SELECT receivedAt, keys FROM batch WHERE kind = ? AND firstSeq >= ?", arguments: [kind, from])
        }
        try sightings.apply(db)
        try setWatermark(newest, db: db)
        return newest
    }
}
