/// Tuning of the embedded store. Defaults are sized for tens of thousands of records a second: batches large enough for
/// zlib to reach high ratios on repetitive telemetry, small enough to inflate quickly when
/// a query needs a single record.
public struct StoreConfiguration: Sendable, Hashable {
    /// zlib level of the group committer's batches (0-9): the form a record has for its first
    /// seconds, until the compactor merges it into a segment (whose payload is deflated at
    /// level 6 and key columns at 9, whatever this says). Level 1 by default because this
    /// deflate runs on every request's path and its output lives only seconds: at level 6 it
    /// was about a fifth of the daemon's CPU at full ingest (84k against 108k records/s
    /// with level 1 on the same build, BENCHMARKS.md), for nothing stored long.
    public var zlibLevel: Int32
    /// A batch is cut at this many records ...
    public var maxBatchRecords: Int
    /// ... or this many uncompressed bytes, whichever comes first.
    public var maxBatchBytes: Int
    /// A request's records of one kind and environment, when at least this many, are
    /// encoded into batches of their own by the request's task before they queue (see
    /// `PreparedBatch`); fewer are packed with their neighbours' by the committer, so a
    /// fleet of small requests still makes batches large enough to compress well.
    public var minPreparedRecords: Int
    /// A commit that runs longer than this marks the committer as wedged (stops watchdog pings).
    public var wedgedAfterSeconds: Double
    /// How the background compactor merges batches into segments.
    public var compaction: CompactionPolicy
    /// WAL bytes after which a commit checkpoints them into the database file (`PRAGMA
    /// wal_autocheckpoint`; SQLite's default is 1,000 pages, 4 MiB). A checkpoint writes each
    /// page the WAL holds once, however many commits changed it, and the retry-id index takes
    /// one random leaf page per record: at 4 MiB nearly every copy in the WAL was written to
    /// the file again, at 64 MiB the daemon wrote 27-29% fewer bytes a record at the same
    /// ingest and read speed (BENCHMARKS.md, issue 28). A checkpoint needs room in the
    /// database file for what the WAL holds, so the daemon keeps this at most a quarter of the
    /// free space its disk guard keeps (``boundedByDiskHeadroom(_:)``).
    public var walCheckpointBytes: Int
    /// Page cache of the connection that commits (`PRAGMA cache_size`; SQLite's default is
    /// 2 MiB, which readers keep). Every record dirties a random leaf page of the retry-id
    /// index, so a commit touches thousands of pages: with 2 MiB most were read back from the
    /// WAL or the file before each change, and some spilled to the WAL before the commit's own
    /// write. At 8 MiB the daemon read 38-88% and wrote 8-37% fewer bytes per record on the
    /// bench's four data sets, for up to 12 MiB more resident under load; its CPU per record was
    /// the same within one round's noise when nothing else ran (BENCHMARKS.md, issue 25).
    public var writerCacheBytes: Int

    public init(
        zlibLevel: Int32 = 1, maxBatchRecords: Int = 8192, maxBatchBytes: Int = 4 << 20, minPreparedRecords: Int = 64,
        wedgedAfterSeconds: Double = 20, compaction: CompactionPolicy = .init(), walCheckpointBytes: Int = 64 << 20,
        writerCacheBytes: Int = 8 << 20
    ) {
        self.zlibLevel = zlibLevel
        self.maxBatchRecords = maxBatchRecords
        self.maxBatchBytes = maxBatchBytes
        self.minPreparedRecords = minPreparedRecords
        self.wedgedAfterSeconds = wedgedAfterSeconds
        self.compaction = compaction
        self.walCheckpointBytes = walCheckpointBytes
        self.writerCacheBytes = writerCacheBytes
    }

    /// The same with ``walCheckpointBytes`` at most a quarter of `headroomBytes`, the free
    /// space below which ingest is refused: a WAL that outgrew it could not be checkpointed
    /// on a disk that filled up, and retention's deletes, in the WAL too, would free nothing.
    public func boundedByDiskHeadroom(_ headroomBytes: Int64) -> StoreConfiguration {
        var bounded = self
        bounded.walCheckpointBytes = Int(min(Int64(walCheckpointBytes), max(headroomBytes / 4, 1 << 20)))
        return bounded
    }
}
