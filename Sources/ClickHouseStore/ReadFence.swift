import Metrics
import StoreCore
import TelemetryModel

/// Read-your-writes for this collector: a record it acknowledged is in its spool, not yet in
/// ClickHouse, so before a read the fence waits until every batch that was waiting when the
/// read began has been shipped. Batches committed after the read began are not waited for
/// (a steady ingest cannot hold a read back). Records another collector acknowledged are
/// visible once that collector shipped them.
///
/// The wait is bounded twice, checked every `poll`: it gives up after `bound` (default 5 s)
/// without progress (the oldest waiting batch did not move: ClickHouse down or stuck), and
/// after `maxWait` (default 30 s) in all, so a spool draining a backlog cannot hold a read
/// for minutes. While the forwarder ships, the read waits for it: large records (a few
/// hundred 60 KB events are a 20 MB insert) take longer than a fixed 2 s under load, and a
/// read that went ahead then missed what this collector had acknowledged. Given up, the read
/// goes ahead with what ClickHouse has (and fails with ClickHouse's error if it is
/// unreachable), and the miss is counted in `mamtelemetry_clickhouse_read_fence_timeouts_total`.
struct ReadFence: Sendable {
    let spool: any Spool
    let clock: any WallClock
    var bound: Duration = .seconds(5)
    var maxWait: Duration = .seconds(30)
    var poll: Duration = .milliseconds(20)
    let sleep: @Sendable (Duration) async throws -> Void
    let timeouts: Counter

    /// Returns true when everything waiting at the start was shipped, false when the bound passed.
    @discardableResult
    func wait(env: TelemetryEnvironment) async throws -> Bool {
        guard let newest = try await spool.unshippedBatchIDs(env: env)?.upperBound else { return true }
        let start = clock.monotonicNow()
        var progressed = start
        var lastOldest: Int64?
        while true {
            // Shipped batches are deleted: once the oldest waiting is past `newest`, every
            // batch committed before the read began is in ClickHouse. (An id can come back
            // after the spool emptied; the fence then waits for a newer batch, never less.)
            guard let oldest = try await spool.unshippedBatchIDs(env: env)?.lowerBound, oldest <= newest else { return true }
            let now = clock.monotonicNow()
            if oldest != lastOldest {
                lastOldest = oldest
                progressed = now
            }
            if now.seconds(since: progressed) >= Self.seconds(bound) || now.seconds(since: start) >= Self.seconds(maxWait) {
                timeouts.increment()
                return false
            }
            try await sleep(poll)
        }
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
