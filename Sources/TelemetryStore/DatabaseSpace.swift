import Foundation
import GRDB
import TelemetryModel

/// Told before a long one-time maintenance step while the store opens (what, and the bytes
/// it rewrites), so the daemon can ask systemd for more start-up time and say why.
public typealias StoreMaintenanceNotice = @Sendable (_ what: String, _ bytes: Int64) -> Void

/// One environment's disk space: what its files take, what its pages hold, and giving
/// deleted space back to the filesystem. SQLite keeps the pages of deleted rows on a free
/// list inside the file, so without this a database never shrinks and a disk past its
/// high-water mark never recovers by retention. With `auto_vacuum=INCREMENTAL`,
/// `PRAGMA incremental_vacuum` moves live pages into the holes and truncates the file; a
/// `wal_checkpoint(TRUNCATE)` then writes that into the database and empties the WAL.
struct DatabaseSpace: Sendable {
    let env: TelemetryEnvironment
    /// The environment's directory: the database, its WAL and shared memory, nothing else.
    let directory: URL
    let pool: DatabasePool

    /// `PRAGMA auto_vacuum` value of incremental mode.
    static let incrementalAutoVacuum = 2

    /// Turns incremental vacuum on, once per database file. A new (empty) database only
    /// needs the setting; one created before it existed is rewritten by a one-time `VACUUM`
    /// (which needs free space about the size of the database, and cannot run inside the
    /// migrator's transaction, so it runs here, before migrations). `notice` is told first
    /// when there is data to rewrite, since that can take minutes on a large store.
    func enableIncrementalVacuum(notice: StoreMaintenanceNotice) throws {
        try pool.writeWithoutTransaction { db in
            guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != Self.incrementalAutoVacuum else { return }
            let bytes = sizeOnDisk()
            if try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0 > 0 {
                notice("converting the \(env.rawValue) database to incremental vacuum (once)", bytes)
            }
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "VACUUM")
        }
    }

    /// Pages one vacuum step moves (8 MiB of 4 KiB pages). Moving a live page into a hole
    /// writes it to the WAL, so one `PRAGMA incremental_vacuum` over everything a minute of
    /// retention and compaction freed (tens of megabytes under steady load) grew the WAL by
    /// all of it in one transaction. In steps, each followed by a checkpoint, the WAL is
    /// reused and stays near one step; commits run in between.
    static let vacuumStepPages = 2048

    /// Bytes the WAL file is cut back to when it is reset: what it keeps on disk between
    /// checkpoints (`PRAGMA journal_size_limit`), counted in the files beside the size cap.
    static let walKeptBytes = 16 << 20

    /// Truncates the file by its free pages and empties the WAL; returns the bytes the
    /// environment's files shrank by. A reader holding an old snapshot can keep the WAL
    /// from being emptied this time (SQLITE_BUSY): the next pass finishes the job.
    @discardableResult
    func returnFreePages() async throws -> Int64 {
        let before = sizeOnDisk()
        while try await vacuumStep() {}
        try await pool.writeWithoutTransaction { db in _ = try? db.checkpoint(.truncate) }
        return max(0, before - sizeOnDisk())
    }

    /// Moves up to ``vacuumStepPages`` pages into holes and truncates the file by as many,
    /// then checkpoints without waiting for readers; false once no free page is left (or a
    /// step freed nothing, which ends the loop whatever a concurrent commit does).
    private func vacuumStep() async throws -> Bool {
        try await pool.writeWithoutTransaction { db in
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            guard free > 0 else { return false }
            try db.execute(sql: "PRAGMA incremental_vacuum(\(Self.vacuumStepPages))")
            _ = try? db.checkpoint(.passive)
            let left = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            return left > 0 && left < free
        }
    }

    /// ``usedBytes(_:)`` from a read snapshot: two header fields, cheap enough to ask after
    /// every commit.
    func usedBytes() async throws -> Int64 {
        try await pool.read { try Self.usedBytes($0) }
    }

    /// Bytes of the database's pages that hold data (free-list pages excluded): what the
    /// size cap is compared with, independent of when the file was last truncated.
    static func usedBytes(_ db: Database) throws -> Int64 {
        let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        return (pages - free) * pageSize
    }

    /// Bytes of this environment's files (database, WAL, shared memory).
    func sizeOnDisk() -> Int64 {
        Self.sizeOnDisk(directory)
    }

    /// Bytes of the files in `directory` (an environment's: database, WAL, shared memory).
    static func sizeOnDisk(_ directory: URL) -> Int64 {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var total: Int64 = 0
        for f in files {
            let attrs = try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(f).path)
            total += (attrs?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return total
    }
}
