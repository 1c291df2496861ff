/// What the daemon watches of a store's write path, apart from the records themselves:
/// admission refuses past a queue bound, the systemd watchdog stops being fed when a commit
/// hangs, the status line shows a rate. Any backend that queues writes before they are
/// durable (the embedded group committer, a batching client of a remote engine) offers it.
public protocol CommitQueue: Sendable {
    /// Records accepted but not yet durable: the depth backpressure compares with its bound.
    var queuedRecords: Int { get }
    /// Records made durable since start.
    var committedRecords: Int { get }
    /// False when a write has been in progress for too long: storage hung.
    func isHealthy() -> Bool
}
