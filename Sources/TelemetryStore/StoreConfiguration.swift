/// Tuning of the embedded store. Defaults are sized for tens of thousands of records a second: batches large enough for
/// zlib to reach high ratios on repetitive telemetry, small enough to inflate quickly when
/// a query needs a single record.
public struct StoreConfiguration: Sendable, Hashable {
    /// zlib level for stored batches (0-9).
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
        zlibLevel: Int32 = 6, maxBatchRecords: Int = 8192, maxBatchBytes: Int = 4 << 20, minPreparedRecords: Int = 64,
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
