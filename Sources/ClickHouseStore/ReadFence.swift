import Metrics
import TelemetryModel
import TelemetryStore

/// Read-your-writes for this collector: a record it acknowledged is in its spool, not yet in
/// ClickHouse, so before a read the fence waits until every batch that was waiting when the
/// read began has been shipped. Batches committed after the read began are not waited for
/// (a steady ingest cannot hold a read back). Records another collector acknowledged are
/// visible once that collector shipped them.
///
/// The wait is bounded (`bound`, default 2 s, checked every `poll`): when ClickHouse is down
/// or slow the read goes ahead with what ClickHouse has (and fails with ClickHouse's error
/// if it is unreachable), and the miss is counted in
/// `mamtelemetry_clickhouse_read_fence_timeouts_total`.
struct ReadFence: Sendable {
    let spool: any Spool
    let clock: any WallClock
    var bound: Duration = .seconds(2)
    var poll: Duration = .milliseconds(20)
    let sleep: @Sendable (Duration) async throws -> Void
    let timeouts: Counter

    /// Returns true when everything waiting at the start was shipped, false when the bound passed.
    @discardableResult
    func wait(env: TelemetryEnvironment) async throws -> Bool {
        guard let newest = try await spool.unshippedBatchIDs(env: env)?.upperBound else { return true }
        let start = clock.monotonicNow()
        let limit = Double(bound.components.seconds) + Double(bound.components.attoseconds) / 1e18
        while true {
            // Shipped batches are deleted: once the oldest waiting is past `newest`, every
            // batch committed before the read began is in ClickHouse. (An id can come back
            // after the spool emptied; the fence then waits for a newer batch, never less.)
            guard let oldest = try await spool.unshippedBatchIDs(env: env)?.lowerBound, oldest <= newest else { return true }
            if clock.monotonicNow().seconds(since: start) >= limit {
                timeouts.increment()
                return false
            }
            try await sleep(poll)
        }
    }
}
