/// The moments of a commit where a test can make the store fail or stop the process, to
/// prove a request is stored all or nothing, across kinds and environments (see
/// CrossEnvironmentCommit), and that compaction keeps every record exactly once.
public enum CommitFaultPoint: String, Sendable, CaseIterable {
    /// Inside an environment's transaction that writes both kinds (an OTLP request's log
    /// records and events), after the first kind's rows and before the second's: a throw
    /// rolls the transaction back, a crash leaves none of it.
    case betweenKinds = "between-kinds"
    /// The first environment's transaction (records staged) is durable; the last
    /// environment's transaction has not started. A crash here must leave nothing stored.
    case afterStaging = "after-staging"
    /// Inside the last environment's transaction, after its rows are written and before it
    /// commits: a throw here makes that commit fail and roll back.
    case beforeDecisionCommit = "before-decision-commit"
    /// The decision is durable; the staged records are not yet published. A crash here
    /// must leave the whole request stored (published when the store next opens).
    case afterDecision = "after-decision"
    /// Inside a compaction's transaction, after the merged rows are deleted and before their
    /// segment is inserted: a crash here must leave the rows as they were.
    case compactionMidMerge = "compaction-mid-merge"
    /// A compaction's transaction is durable: a crash here must leave the segment only.
    case afterCompaction = "after-compaction"
    /// The ClickHouse forwarder's insert is acknowledged and its batches are still in the
    /// spool: a crash here makes the restarted collector send them again.
    case afterClickHouseInsert = "after-clickhouse-insert"
}

/// A test seam the store takes as a parameter: called at each `CommitFaultPoint` a commit
/// reaches; whatever it throws fails that step as a real I/O error would.
/// The daemon passes `NoCommitFaults` unless a test hook asks otherwise.
public protocol CommitFaultInjector: Sendable {
    func reached(_ point: CommitFaultPoint) throws
}

/// Production: never interferes.
public struct NoCommitFaults: CommitFaultInjector {
    public init() {}
    public func reached(_ point: CommitFaultPoint) {}
}
