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

    public init(
        zlibLevel: Int32 = 1, maxBatchRecords: Int = 8192, maxBatchBytes: Int = 4 << 20, minPreparedRecords: Int = 64,
        wedgedAfterSeconds: Double = 20, compaction: CompactionPolicy = .init()
    ) {
        self.zlibLevel = zlibLevel
        self.maxBatchRecords = maxBatchRecords
        self.maxBatchBytes = maxBatchBytes
        self.minPreparedRecords = minPreparedRecords
        self.wedgedAfterSeconds = wedgedAfterSeconds
        self.compaction = compaction
    }
}
