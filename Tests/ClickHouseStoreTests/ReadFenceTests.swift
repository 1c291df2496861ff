import Metrics
import MetricsTestKit
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore
@testable import TelemetryStore

/// The read fence's two bounds, on a spool whose waiting batches drain on a schedule: it keeps
/// waiting while the oldest waiting batch moves (a large backlog shipping under load), gives
/// up when nothing moves for `bound`, and never waits past `maxWait` in all. Time is a
/// `ManualClock` the fence's own sleeps advance, so the waits are exact and take no time.
@Suite struct ReadFenceTests {
    /// Batches `first...newest` wait at the start; one is shipped every `step` of `clock`'s
    /// time (never, when nil).
    final class DrainingSpool: Spool {
        let clock: ManualClock
        let started: ContinuousClock.Instant
        let first: Int64
        let newest: Int64
        let step: Duration?

        init(clock: ManualClock, first: Int64, newest: Int64, step: Duration?) {
            self.clock = clock
            started = clock.monotonicNow()
            self.first = first
            self.newest = newest
            self.step = step
        }

        func unshippedBatchIDs(env: TelemetryEnvironment) async throws -> ClosedRange<Int64>? {
            let shipped = step.map { Int64((clock.monotonicNow() - started) / $0) } ?? 0
            let oldest = first + shipped
            return oldest <= newest ? oldest...newest : nil
        }

        // The fence reads nothing else of the spool.
        func unshippedBatches(env: TelemetryEnvironment, after: Int64, limit: Int) async throws -> [SpoolBatch] { [] }
        func removeShipped(env: TelemetryEnvironment, batchIDs: [Int64]) async throws {}
        func unshippedIncidents(env: TelemetryEnvironment) async throws -> [Incident] { [] }
        func markIncidentsShipped(env: TelemetryEnvironment, ids: [String]) async throws {}
        func depth(env: TelemetryEnvironment) async throws -> SpoolDepth { SpoolDepth() }
        func maintain(env: TelemetryEnvironment, limits: RetentionPolicy.Limits, nowMs: Int64) async throws -> RetentionResult {
            RetentionResult()
        }
        func returnFreeSpace(env: TelemetryEnvironment) async throws -> Int64 { 0 }
    }

    static func fence(_ spool: DrainingSpool, metrics: TestMetrics, bound: Duration, maxWait: Duration) -> ReadFence {
        ReadFence(
            spool: spool, clock: spool.clock, bound: bound, maxWait: maxWait, poll: .milliseconds(5),
            sleep: { spool.clock.advance($0) }, timeouts: Counter(label: "fence_timeouts", factory: metrics))
    }

    @Test func aDrainingBacklogIsWaitedForPastTheNoProgressBound() async throws {
        // Ten batches, one shipped every 40 ms: 400 ms in all, against 150 ms without progress.
        let metrics = TestMetrics()
        let clock = ManualClock()
        let fence = Self.fence(
            DrainingSpool(clock: clock, first: 1, newest: 10, step: .milliseconds(40)), metrics: metrics, bound: .milliseconds(150),
            maxWait: .seconds(5))
        let started = clock.monotonicNow()
        #expect(try await fence.wait(env: .prod))
        let waited = clock.monotonicNow() - started
        #expect(waited >= .milliseconds(400) && waited < .milliseconds(450), "\(waited)")
        #expect(try metrics.expectCounter("fence_timeouts").totalValue == 0)
    }

    @Test func aSpoolThatDoesNotMoveIsGivenUpOnAfterTheBound() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let fence = Self.fence(
            DrainingSpool(clock: clock, first: 1, newest: 10, step: nil), metrics: metrics, bound: .milliseconds(150), maxWait: .seconds(5))
        let started = clock.monotonicNow()
        #expect(try await fence.wait(env: .prod) == false)
        let waited = clock.monotonicNow() - started
        #expect(waited >= .milliseconds(150) && waited < .milliseconds(160), "\(waited)")
        #expect(try metrics.expectCounter("fence_timeouts").totalValue == 1)
    }

    @Test func aBacklogTooLongIsGivenUpOnAtTheOverallBound() async throws {
        // A thousand batches at 20 ms each would take 20 s; the read waits 400 ms at most.
        let metrics = TestMetrics()
        let clock = ManualClock()
        let fence = Self.fence(
            DrainingSpool(clock: clock, first: 1, newest: 1000, step: .milliseconds(20)), metrics: metrics, bound: .milliseconds(150),
            maxWait: .milliseconds(400))
        let started = clock.monotonicNow()
        #expect(try await fence.wait(env: .prod) == false)
        let waited = clock.monotonicNow() - started
        #expect(waited >= .milliseconds(400) && waited < .milliseconds(410), "\(waited)")
        #expect(try metrics.expectCounter("fence_timeouts").totalValue == 1)
    }

    @Test func nothingWaitingIsNoWait() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let fence = Self.fence(
            DrainingSpool(clock: clock, first: 2, newest: 1, step: nil), metrics: metrics, bound: .seconds(5), maxWait: .seconds(5))
        let started = clock.monotonicNow()
        #expect(try await fence.wait(env: .prod))
        #expect(clock.monotonicNow() == started)
    }
}
