/// A point-in-time view of the journal mirror for `/readyz` and diagnostics: whether
/// journald takes our entries, and how many were sent, failed or dropped.
public struct JournalMirrorStatus: Sendable, Hashable, Codable {
    /// Whether mirroring is configured on.
    public var enabled: Bool
    /// Whether journald accepted the last entry (or, before any was sent, whether its
    /// socket answered at start-up).
    public var reachable: Bool
    /// Entries journald accepted.
    public var sent: UInt64
    /// Entries journald refused or could not be reached for.
    public var failed: UInt64
    /// Entries never sent: the queue was full, or shutdown's flush deadline passed.
    public var dropped: UInt64
    /// Entries waiting to be sent, including the batch being sent now.
    public var queueDepth: Int
    /// The last send error, e.g. `No such file or directory (ENOENT)`; `nil` until one
    /// happens.
    public var lastError: String?

    public init(
        enabled: Bool, reachable: Bool, sent: UInt64, failed: UInt64, dropped: UInt64,
        queueDepth: Int, lastError: String?
    ) {
        self.enabled = enabled
        self.reachable = reachable
        self.sent = sent
        self.failed = failed
        self.dropped = dropped
        self.queueDepth = queueDepth
        self.lastError = lastError
    }

    /// One line for `/readyz` and `STATUS=`: `journal reachable: sent 120, failed 0,
    /// dropped 0, queued 3`, with the last error when the journal is not reachable.
    public var summary: String {
        guard enabled else { return "journal mirror disabled" }
        let counts = "sent \(sent), failed \(failed), dropped \(dropped), queued \(queueDepth)"
        if reachable { return "journal reachable: " + counts }
        return "journal unreachable" + (lastError.map { " (\($0))" } ?? "") + ": " + counts
    }
}
