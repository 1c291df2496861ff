public import TelemetryModel

/// The embedded store seen as the spool of a remote backend: committed batches in commit
/// order, removed only once the remote end acknowledged them. Ingest keeps its group commit
/// and its "2xx means durable" promise; a forwarder drains the spool behind it.
public protocol Spool: Sendable {
    /// Up to `limit` committed batches of `env` with a batch id above `after`, oldest first.
    func unshippedBatches(env: TelemetryEnvironment, after: Int64, limit: Int) async throws -> [SpoolBatch]
    /// Removes shipped batches. The retry-recognition ids of their records stay (a client
    /// retry after shipping is still recognised) until ``maintain(env:limits:nowMs:)`` ages
    /// them out past ``SpoolRetryWindow/seconds``.
    func removeShipped(env: TelemetryEnvironment, batchIDs: [Int64]) async throws
    /// Incidents of `env` not yet acknowledged by the remote end.
    func unshippedIncidents(env: TelemetryEnvironment) async throws -> [Incident]
    func markIncidentsShipped(env: TelemetryEnvironment, ids: [String]) async throws
    /// What waits to be shipped in `env`.
    func depth(env: TelemetryEnvironment) async throws -> SpoolDepth
    /// Keeps the spool's bookkeeping bounded without touching anything unshipped: ages out
    /// retry-recognition ids past the retry window, shipped incidents past the logs age and
    /// event rollups past theirs. Retention never deletes a spooled batch: the spool drains
    /// only by shipping, and its size is bounded by the ingest cap instead.
    func maintain(env: TelemetryEnvironment, limits: RetentionPolicy.Limits, nowMs: Int64) async throws -> RetentionResult
    /// Gives space held by already deleted rows back to the filesystem; returns the bytes freed.
    func returnFreeSpace(env: TelemetryEnvironment) async throws -> Int64
    /// The ids of the oldest and the newest batch waiting in `env`, nil when none waits.
    /// Shipped batches are deleted, so a reader that noted the newest id knows everything
    /// committed before it has reached the remote end once the oldest is past it.
    func unshippedBatchIDs(env: TelemetryEnvironment) async throws -> ClosedRange<Int64>?
}

/// How long a collector on a remote backend recognises a client's retry (same kind, app and
/// `eventId`) after the original was shipped: 7 days. A client retries a request whose
/// acknowledgement it never saw, from its offline queue, when it is next online; a week
/// covers a device that went offline for days. The embedded store recognises a retry as
/// long as it keeps the original (30 days of events by default), but a spool must stay
/// small: a week of ids is bounded by a week of ingest, not by the retention period.
public enum SpoolRetryWindow {
    public static let seconds: Int64 = 7 * 86_400
}

/// What two records must share to be one record retried: kind, `appId` and `eventId`,
/// compared as bytes up to the first NUL. The embedded store keeps the pair as SQLite text
/// bound from a C string, which ends at a NUL, so `"x\0y"` is a retry of `"x"` there; a
/// remote backend that recognises retries compares the same prefix, so that a retry is one
/// whichever collector (and store) sees it.
public enum RetryIdentity {
    public static func text(_ value: String) -> String {
        guard let nul = value.utf8.firstIndex(of: 0) else { return value }
        return String(value.utf8[..<nul])!
    }
}

/// One committed batch as the spool holds it: records numbered `firstSeq ..< firstSeq+count`
/// in this environment, all stamped with the batch's receive time.
public struct SpoolBatch: Sendable {
    public var env: TelemetryEnvironment
    /// The batch row's id: the order batches were committed in.
    public var batchID: Int64
    public var kind: RecordKind
    public var firstSeq: Int64
    public var receivedAt: Int64
    public var storedBytes: Int64
    public var keys: [RecordKeys]
    /// Each record's JSON exactly as received, in the order of `keys`.
    public var records: [ArraySlice<UInt8>]
    /// The `eventId`s of the batch's records that carry one (outside diagnostic uploads):
    /// shipped beside the rows so that any collector can recognise a client's retry.
    public var eventIDs: [SpooledEventID]

    public init(
        env: TelemetryEnvironment, batchID: Int64, kind: RecordKind, firstSeq: Int64, receivedAt: Int64, storedBytes: Int64,
        keys: [RecordKeys], records: [ArraySlice<UInt8>], eventIDs: [SpooledEventID] = []
    ) {
        self.env = env
        self.batchID = batchID
        self.kind = kind
        self.firstSeq = firstSeq
        self.receivedAt = receivedAt
        self.storedBytes = storedBytes
        self.keys = keys
        self.records = records
        self.eventIDs = eventIDs
    }
}

/// A record's retry identity as the spool keeps it (``RetryIdentity``) and its position in
/// its spooled batch (`seq - firstSeq`).
public struct SpooledEventID: Sendable, Hashable {
    public var index: Int
    public var appId: String
    public var eventId: String

    public init(index: Int, appId: String, eventId: String) {
        self.index = index
        self.appId = appId
        self.eventId = eventId
    }
}

/// How much of one environment waits in the spool.
public struct SpoolDepth: Sendable, Hashable {
    public var records: Int
    /// Compressed bytes of the waiting batches.
    public var bytes: Int64
    /// Receive time of the oldest waiting batch, nil when none waits.
    public var oldestReceivedAt: Int64?

    public init(records: Int = 0, bytes: Int64 = 0, oldestReceivedAt: Int64? = nil) {
        self.records = records
        self.bytes = bytes
        self.oldestReceivedAt = oldestReceivedAt
    }
}
