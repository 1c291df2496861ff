/// The moments of a cross-environment commit where a test can make the store fail or stop
/// the process, to prove a request is stored all or nothing (see CrossEnvironmentCommit).
public enum CommitFaultPoint: String, Sendable, CaseIterable {
    /// The first environment's transaction (records staged) is durable; the last
    /// environment's transaction has not started. A crash here must leave nothing stored.
    case afterStaging = "after-staging"
    /// Inside the last environment's transaction, after its rows are written and before it
    /// commits: a throw here makes that commit fail and roll back.
    case beforeDecisionCommit = "before-decision-commit"
    /// The decision is durable; the staged records are not yet published. A crash here
    /// must leave the whole request stored (published when the store next opens).
    case afterDecision = "after-decision"
}

/// A test seam the store takes as a parameter: called at each `CommitFaultPoint` of a
/// cross-environment commit; whatever it throws fails that step as a real I/O error would.
/// The daemon passes `NoCommitFaults` unless a test hook asks otherwise.
public protocol CommitFaultInjector: Sendable {
    func reached(_ point: CommitFaultPoint) throws
}

/// Production: never interferes.
public struct NoCommitFaults: CommitFaultInjector {
    public init() {}
    public func reached(_ point: CommitFaultPoint) {}
}
