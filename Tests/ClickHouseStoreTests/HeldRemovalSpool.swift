import StoreCore
import Synchronization
import TelemetryModel

/// The spool, except that its first ``removeShipped(env:batchIDs:)`` is held until the test
/// releases it, as a delete waiting for SQLite's writer behind ingest's group commits is.
/// Records every removal's batch ids, in the order they reach the spool.
final class HeldRemovalSpool: Spool {
    let spool: any Spool
    let removals = Mutex<[[Int64]]>([])
    /// Yields once the first removal is held.
    let held: AsyncStream<Void>
    private let heldSignal: AsyncStream<Void>.Continuation
    private let release: AsyncStream<Void>
    private let releaseSignal: AsyncStream<Void>.Continuation

    init(_ spool: any Spool) {
        self.spool = spool
        (held, heldSignal) = AsyncStream.makeStream()
        (release, releaseSignal) = AsyncStream.makeStream()
    }

    /// Lets the held removal reach the spool.
    func releaseRemoval() { releaseSignal.yield() }

    func removeShipped(env: TelemetryEnvironment, batchIDs: [Int64]) async throws {
        let first = removals.withLock { r in
            r.append(batchIDs)
            return r.count == 1
        }
        if first {
            heldSignal.yield()
            for await _ in release { break }
        }
        try await spool.removeShipped(env: env, batchIDs: batchIDs)
    }

    func unshippedBatches(env: TelemetryEnvironment, after: Int64, limit: Int) async throws -> [SpoolBatch] {
        try await spool.unshippedBatches(env: env, after: after, limit: limit)
    }
    func unshippedIncidents(env: TelemetryEnvironment) async throws -> [Incident] { try await spool.unshippedIncidents(env: env) }
    func markIncidentsShipped(env: TelemetryEnvironment, ids: [String]) async throws {
        try await spool.markIncidentsShipped(env: env, ids: ids)
    }
    func depth(env: TelemetryEnvironment) async throws -> SpoolDepth { try await spool.depth(env: env) }
    func maintain(env: TelemetryEnvironment, limits: RetentionPolicy.Limits, nowMs: Int64) async throws -> RetentionResult {
        try await spool.maintain(env: env, limits: limits, nowMs: nowMs)
    }
    func returnFreeSpace(env: TelemetryEnvironment) async throws -> Int64 { try await spool.returnFreeSpace(env: env) }
    func unshippedBatchIDs(env: TelemetryEnvironment) async throws -> ClosedRange<Int64>? {
        try await spool.unshippedBatchIDs(env: env)
    }
}
