import Compression
import Foundation
import GRDB
import StoreCore
import TelemetryModel

/// One environment's SQLite file (WAL mode, `synchronous=FULL`: a commit is on stable
/// storage before it returns, and a torn tail of the WAL is discarded by SQLite's checksums
/// on the next open). It opens the file and holds one type per job, all sharing the pool;
/// new records are written only through `committer`, and readers run concurrently on WAL
/// snapshots, so queries never block ingest.
final class EnvironmentDatabase: Sendable {
    /// The database file in an environment's directory (WAL and shared memory beside it).
    static let fileName = "records.sqlite"

    let env: TelemetryEnvironment
    let directory: URL
    let pool: DatabasePool
    let configuration: StoreConfiguration
    /// Rows where query pages stopped, for the pages that continue from them.
    let resumeBlocks = ResumeBlocks()
    /// What reads of the batch table cost so far (rows and SQLite steps), for tests and stats.
    let reads = ReadCounter()
    /// Writing records: batches, dedup ids, rollups, incidents, device index rows.
    let committer: BatchCommitter
    /// The files' size and giving deleted pages back.
    let space: DatabaseSpace
    /// The committed batches a ClickHouse forwarder ships from this database.
    let spool: EnvironmentSpool
    /// Deleting by age and size, scrubbing verbose records.
    let retention: EnvironmentRetention
    /// Hourly event rollups: stats reads, rebuilds.
    let rollups: EnvironmentRollups
    /// Device lookups and the user's devices.
    let deviceIndex: DeviceIndex
    /// Record pages, scans, incidents.
    let reader: SQLiteRecordReader
    /// Merging small batches into segments.
    let compaction: SegmentCompaction

    init(
        env: TelemetryEnvironment, directory: URL, configuration: StoreConfiguration,
        maintenance: StoreMaintenanceNotice = { _, _ in }
    ) throws {
        self.env = env
        self.directory = directory
        self.configuration = configuration
        try PrivateFiles.directory(directory)
        var config = Configuration()
        config.label = "store-\(env.rawValue)"
        // Another opener of the same file (a predecessor still closing, `--store-layout`
        // beside the service) can hold a lock for a moment while this one opens or recovers
        // the WAL: wait for it rather than fail the start on SQLITE_BUSY.
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA journal_size_limit = \(DatabaseSpace.walKeptBytes)")
            try db.execute(sql: Self.walCheckpointPragma(bytes: configuration.walCheckpointBytes))
            // Debian's SQLite zeroes every freed page by default, which writes each deleted
            // batch to the WAL once more: retention on a nearly full disk would need as much
            // room as it frees. FAST zeroes only what costs no extra I/O; incremental vacuum
            // then cuts the freed pages off the file, so deleted records do not stay in it.
            try db.execute(sql: "PRAGMA secure_delete = FAST")
        }
        let path = directory.appendingPathComponent(Self.fileName).path
        try PrivateFiles.database(path)
        pool = try DatabasePool(path: path, configuration: config)
        // Only the writer's cache grows (prepareDatabase would size every reader's too).
        try pool.writeWithoutTransaction { db in try db.execute(sql: Self.writerCachePragma(bytes: configuration.writerCacheBytes)) }
        let space = DatabaseSpace(env: env, directory: directory, pool: pool)
        self.space = space
        spool = EnvironmentSpool(env: env, pool: pool, space: space)
        retention = EnvironmentRetention(pool: pool, space: space)
        rollups = EnvironmentRollups(pool: pool, reads: reads)
        compaction = SegmentCompaction(pool: pool)
        reader = SQLiteRecordReader(env: env, pool: pool, resumeBlocks: resumeBlocks, reads: reads)
        try space.enableIncrementalVacuum(notice: maintenance)
        try StoreSchema.migrator.migrate(pool)
        let indexed = try pool.write { db in try DeviceIndexBuffer.catchUp(db) }
        let sightings = DeviceIndexBuffer(through: indexed)
        committer = BatchCommitter(pool: pool, configuration: configuration, deviceIndex: sightings)
        deviceIndex = DeviceIndex(pool: pool, buffer: sightings)
    }

    /// The statement that makes commits checkpoint the WAL once it holds `bytes` (in pages
    /// of 4 KiB, at least one).
    static func walCheckpointPragma(bytes: Int) -> String {
        "PRAGMA wal_autocheckpoint = \(max(1, bytes / 4096))"
    }

    /// The statement that sizes a connection's page cache to `bytes` (in KiB, at least one
    /// page: SQLite reads a negative size as KiB).
    static func writerCachePragma(bytes: Int) -> String {
        "PRAGMA cache_size = -\(max(4, bytes / 1024))"
    }

    /// Moves the WAL's checkpoint size while the store runs (a reload that moved the disk
    /// guard's headroom). The setting belongs to the connection that commits, the pool's
    /// one writer, so setting it there reaches every later commit.
    func setWALCheckpointBytes(_ bytes: Int) async throws {
        try await pool.writeWithoutTransaction { db in try db.execute(sql: Self.walCheckpointPragma(bytes: bytes)) }
    }
}
