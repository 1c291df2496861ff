public import TelemetryModel

/// The deletions retention asks of a backend, per environment. ``RetentionService`` decides
/// what goes and when (age and size limits, the disk's keep-free floor); a backend only
/// knows how to delete its oldest data and give the space back to the filesystem.
public protocol RetentionStore: Sendable {
    /// Deletes what is past the age limits of `limits`, then the oldest data while the
    /// environment holds more than its size cap, judged by receive time against `nowMs`;
    /// gives the freed space back to the filesystem when `returnFreeSpace` (otherwise the
    /// commits that follow reuse it).
    func applyRetention(_ limits: RetentionPolicy.Limits, env: TelemetryEnvironment, nowMs: Int64, returnFreeSpace: Bool) async throws
        -> RetentionResult

    /// Bytes the environment's data takes now, as its size cap counts them; nil when this
    /// backend cannot tell cheaply (then only the timer runs its passes).
    func usedBytes(env: TelemetryEnvironment) async throws -> Int64?

    /// Gives space held by already deleted data back to the filesystem, without deleting
    /// anything; returns the bytes the environment's files shrank by.
    func returnFreeSpace(env: TelemetryEnvironment) async throws -> Int64

    /// The receive time of the oldest stored data of `retentionClass`, nil when there is none.
    func oldestReceivedAt(_ retentionClass: RetentionClass, env: TelemetryEnvironment) async throws -> Int64?

    /// Deletes the oldest data of `retentionClass` until at least `bytes` stored bytes are
    /// gone (at least some when any exists), then gives the space back.
    func deleteOldest(_ retentionClass: RetentionClass, env: TelemetryEnvironment, atLeast bytes: Int64) async throws -> RetentionResult
}
