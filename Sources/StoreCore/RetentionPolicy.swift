public import TelemetryModel

/// How long and how much each environment keeps. Verbose log records may carry PII, so they
/// get the shortest age by default: past it their content is scrubbed in place (tombstones
/// keep ids and order) and verbose-only batches are deleted. The size cap deletes in
/// ``RetentionClass`` order. The free space retention keeps on the filesystem is the disk
/// guard's (`DiskGuard.Configuration.keepFreeBytes`), since it is one floor for both
/// environments.
public struct RetentionPolicy: Sendable, Hashable {
    public struct Limits: Sendable, Hashable {
        /// Oldest receive age kept, in seconds (nil: no age limit).
        public var eventsMaxAge: Int64?
        public var logsMaxAge: Int64?
        public var verboseLogsMaxAge: Int64?
        /// Most bytes this environment's database may hold (its live pages); past it batches
        /// are deleted in ``RetentionClass`` order, oldest first.
        public var maxBytes: Int64?
        /// How long an hourly event rollup row is kept after the last record counted in it was
        /// received, in seconds (nil: forever). Rollups outlive the records on purpose, so a
        /// long report still counts hours whose records retention removed. (Minute rollups are
        /// kept for ``EventRollupScope/minutesKeptMs`` of event time, whatever this says.)
        public var rollupsMaxAge: Int64?

        /// Rollups are kept for 400 days unless told otherwise: a year-over-year report works.
        public static let defaultRollupsMaxAge: Int64 = 400 * 86_400

        public init(
            eventsMaxAge: Int64?, logsMaxAge: Int64?, verboseLogsMaxAge: Int64?, maxBytes: Int64?,
            rollupsMaxAge: Int64? = defaultRollupsMaxAge
        ) {
            self.eventsMaxAge = eventsMaxAge
            self.logsMaxAge = logsMaxAge
            self.verboseLogsMaxAge = verboseLogsMaxAge
            self.maxBytes = maxBytes
            self.rollupsMaxAge = rollupsMaxAge
        }
    }

    public var prod: Limits
    public var ppe: Limits
    /// Seconds between timed passes. A pass also runs whenever an environment's database has
    /// grown by ``growthStep`` of its size cap since its last pass (``RetentionService``), so
    /// the timer is what ages data out, not what holds the cap.
    public var passIntervalSeconds: Int

    /// The share of an environment's `maxBytes` it may grow by before a pass runs, and the
    /// margin below the cap a pass over the cap deletes down to: the store then reaches the
    /// cap as the next pass runs, and passes it only by what commits while that pass runs.
    public static let growthStep = 0.025

    /// One ``growthStep`` of `cap` in bytes, at least one.
    public static func growthStep(of cap: Int64) -> Int64 { max(1, Int64(Double(cap) * growthStep)) }

    public init(
        prod: Limits = Limits(eventsMaxAge: 30 * 86_400, logsMaxAge: 14 * 86_400, verboseLogsMaxAge: 3 * 86_400, maxBytes: 20 << 30),
        ppe: Limits = Limits(eventsMaxAge: 7 * 86_400, logsMaxAge: 7 * 86_400, verboseLogsMaxAge: 2 * 86_400, maxBytes: 2 << 30),
        passIntervalSeconds: Int = 300
    ) {
        self.prod = prod
        self.ppe = ppe
        self.passIntervalSeconds = passIntervalSeconds
    }

    public func limits(for env: TelemetryEnvironment) -> Limits { env == .prod ? prod : ppe }
}

/// What one retention pass removed.
public struct RetentionResult: Sendable, Hashable {
    public var batches = 0
    public var records = 0
    /// Compressed bytes of the deleted batches.
    public var bytes: Int64 = 0
    /// Verbose records whose content was scrubbed in place.
    public var verboseScrubbed = 0
    /// Hourly event rollup rows past their own age (see `Limits.rollupsMaxAge`), and minute
    /// rows past the kept minutes (``EventRollupScope/minutesKeptMs``).
    public var rollupRows = 0
    /// Bytes the database files shrank by (free pages cut off, WAL emptied).
    public var bytesReturned: Int64 = 0
    /// Retry-recognition ids deleted: an embedded store's ids of deleted records (swept in key
    /// order, not with each batch), a spool's past the retry window (see ``SpoolRetryWindow``).
    public var retryIDs = 0

    public init() {}

    public static func += (lhs: inout RetentionResult, rhs: RetentionResult) {
        lhs.batches += rhs.batches
        lhs.records += rhs.records
        lhs.bytes += rhs.bytes
        lhs.verboseScrubbed += rhs.verboseScrubbed
        lhs.rollupRows += rhs.rollupRows
        lhs.bytesReturned += rhs.bytesReturned
        lhs.retryIDs += rhs.retryIDs
    }
}
