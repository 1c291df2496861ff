import Foundation
import Logging
import Metrics
import MetricsTestKit
import StoreCore
import Synchronization
import TelemetryModel
import Testing

@testable import TelemetryStore

/// A size cap and a keep-free floor hold while data arrives, not only at the next timed
/// pass: retention looks after every commit and runs a pass once an environment has grown by
/// a fortieth of its cap, and the disk guard checks the floor after every commit. Small caps,
/// incompressible records, a pinned clock; the timer is an hour away throughout.
@Suite struct RetentionGrowthTests {
    static let now: Int64 = 1_800_000_000_000
    /// About 60 kB stored per append.
    static let recordBytes = 15_000

    static func append(_ f: StoreFixture, _ n: Int) async throws {
        let records = (0..<4).map { i in
            RetentionSpaceTests.event(time: Self.now - 1000, eventId: "g\(n)-\(i)", bytes: Self.recordBytes)
        }
        _ = try await f.store.append(records, kind: .event, env: .prod, receivedAt: Self.now - 1000, incident: nil)
    }

    static func policy(cap: Int64?) -> RetentionPolicy {
        let limits = RetentionPolicy.Limits(eventsMaxAge: nil, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: cap)
        return RetentionPolicy(prod: limits, ppe: limits, passIntervalSeconds: 3600)
    }

    @Test func theCapHoldsAfterEveryCommit() async throws {
        let f = try StoreFixture()
        let cap: Int64 = 3_000_000
        let metrics = TestMetrics()
        let service = RetentionService(
            store: f.store, policy: Self.policy(cap: cap), logger: Logger(label: "t"), clock: FixedClock(Self.now), metrics: metrics)
        var worst: Int64 = 0
        // Where each pass that deleted left the store: a growth step below the cap, so the
        // next pass runs as the store reaches the cap instead of a step past it.
        var leftByDeletingPasses: [Int64] = []
        let step = RetentionPolicy.growthStep(of: cap)
        for n in 0..<120 {
            try await Self.append(f, n)
            let before = try await f.store.usedBytes(env: .prod) ?? 0
            try await service.checkGrowth()
            let after = try await f.store.usedBytes(env: .prod) ?? 0
            worst = max(worst, before, after)
            if after < before { leftByDeletingPasses.append(after) }
        }
        #expect(worst <= cap + cap / 10, "the store held \(worst) bytes against a cap of \(cap)")
        #expect(!leftByDeletingPasses.isEmpty)
        #expect(
            leftByDeletingPasses.allSatisfy { $0 <= cap - step },
            "passes left \(leftByDeletingPasses.filter { $0 > cap - step }) bytes, above the cap less a step (\(cap - step))")
        // Retention deleted to the cap, not far below it: the newest data is kept.
        let kept = try await f.store.usedBytes(env: .prod) ?? 0
        #expect(kept >= cap * 8 / 10, "only \(kept) bytes kept under a cap of \(cap)")
        let growthPasses = try metrics.expectCounter(
            MetricName.retentionPasses.rawValue, [("env", "prod"), ("trigger", "growth")]
        ).totalValue
        #expect(growthPasses >= 10, "\(growthPasses) passes for 7 MB of growth in steps of 75 kB past a 3 MB cap")
        await f.close()
    }

    /// The store as retention sees it while group commits go through beside a pass: `landing`
    /// appends arrive after the pass has deleted down to its target, as they do when each of
    /// the pass's steps waits for the writer behind queued commits.
    final class CommitsBesidePasses: RetentionStore {
        let fixture: StoreFixture
        let landing: Int
        let appended = Mutex(1000)

        init(fixture: StoreFixture, landing: Int) {
            self.fixture = fixture
            self.landing = landing
        }

        func land() async throws {
            for _ in 0..<landing {
                let n = appended.withLock { n in
                    n += 1
                    return n
                }
                try await RetentionGrowthTests.append(fixture, n)
            }
        }

        func applyRetention(_ limits: RetentionPolicy.Limits, env: TelemetryEnvironment, nowMs: Int64, returnFreeSpace: Bool) async throws
            -> RetentionResult
        {
            let r = try await fixture.store.applyRetention(limits, env: env, nowMs: nowMs, returnFreeSpace: returnFreeSpace)
            try await land()
            return r
        }
        func usedBytes(env: TelemetryEnvironment) async throws -> Int64? { try await fixture.store.usedBytes(env: env) }
        func returnFreeSpace(env: TelemetryEnvironment) async throws -> Int64 { try await fixture.store.returnFreeSpace(env: env) }
        func oldestReceivedAt(_ retentionClass: RetentionClass, env: TelemetryEnvironment) async throws -> Int64? {
            try await fixture.store.oldestReceivedAt(retentionClass, env: env)
        }
        func deleteOldest(_ retentionClass: RetentionClass, env: TelemetryEnvironment, atLeast bytes: Int64) async throws
            -> RetentionResult
        {
            try await fixture.store.deleteOldest(retentionClass, env: env, atLeast: bytes)
        }
    }

    /// A pass whose target was met but which commits beside it left above the cap is followed
    /// by another at the next commit, not a whole growth step later: in the debug soak on a
    /// slow machine, passes of 10-30 s ended above the cap and the store reached 110% of it.
    @Test func aPassThatCommitsLeftOverTheCapIsFollowedAtTheNextCommit() async throws {
        let f = try StoreFixture()
        let cap: Int64 = 3_000_000
        let step = RetentionPolicy.growthStep(of: cap)
        // Two appends (about 120 kB, 1.6 steps) land beside every pass.
        let store = CommitsBesidePasses(fixture: f, landing: 2)
        let service = RetentionService(
            store: store, policy: Self.policy(cap: cap), logger: Logger(label: "t"), clock: FixedClock(Self.now),
            metrics: NOOPMetricsHandler.instance)
        var worst: Int64 = 0
        var checked = 0
        for n in 0..<120 {
            try await Self.append(f, n)
            let before = try await f.store.usedBytes(env: .prod) ?? 0
            worst = max(worst, before)
            let ran = try await service.checkGrowth()
            let after = try await f.store.usedBytes(env: .prod) ?? 0
            // A store found over the cap gets a pass now, whatever the last pass left.
            if before > cap {
                checked += 1
                #expect(!ran.isEmpty, "append \(n): \(before) bytes against a cap of \(cap) and no pass ran")
                #expect(after <= cap + 2 * step + step / 2, "append \(n): the pass left \(after) bytes")
            }
        }
        #expect(checked >= 5, "the store was over its cap at only \(checked) commits: the test did not exercise the case")
        // One append (60 kB) past a pass's landing commits, never a step past that.
        #expect(worst <= cap + 3 * step + step / 2, "the store held \(worst) bytes against a cap of \(cap)")
        await f.close()
    }

    @Test func commitsWakeRetentionWithoutTheTimer() async throws {
        let f = try StoreFixture()
        let cap: Int64 = 2_000_000
        let store = f.store
        let service = RetentionService(
            store: store, policy: Self.policy(cap: cap), commits: { store.commits() }, logger: Logger(label: "t"),
            clock: FixedClock(Self.now), metrics: NOOPMetricsHandler.instance)
        let running = Task { try await service.run() }
        for n in 0..<100 { try await Self.append(f, n) }
        // The commits rang; the passes they started finish without another commit.
        var used = try await store.usedBytes(env: .prod) ?? 0
        for _ in 0..<200 where used > cap + cap / 10 {
            try await Task.sleep(for: .milliseconds(50))
            used = try await store.usedBytes(env: .prod) ?? 0
        }
        running.cancel()
        #expect(used <= cap + cap / 10, "6 MB appended, \(used) bytes still held against a cap of \(cap)")
        await f.close()
    }

    /// Free space as the store's files take it: a filesystem of `total` bytes where `other`
    /// bytes belong to someone else.
    final class StoreDisk: FilesystemSpace {
        let store: SQLiteRecordStore
        let total: Int64 = 100_000_000
        let other: Int64

        init(store: SQLiteRecordStore, freeAtStart: Int64) {
            self.store = store
            other = total - freeAtStart - store.sizes().prod - store.sizes().ppe
        }

        var free: Int64 { total - other - store.sizes().prod - store.sizes().ppe }

        func usage(of directory: URL) -> FilesystemUsage? { FilesystemUsage(freeBytes: free, totalBytes: total) }
    }

    static func disk(_ f: StoreFixture, floor: Int64, commits: (@Sendable () -> AsyncStream<CommitNotice>)? = nil) -> (
        DiskGuard, StoreDisk
    ) {
        let space = StoreDisk(store: f.store, freeAtStart: floor + 2_000_000)
        let retention = RetentionService(
            store: f.store, policy: Self.policy(cap: nil), logger: Logger(label: "t"), clock: FixedClock(Self.now),
            metrics: NOOPMetricsHandler.instance)
        let guardian = DiskGuard(
            directory: f.directory,
            configuration: { .init(minFreeBytes: 500_000, minFreeRatio: 0, keepFreeBytes: floor, checkInterval: .seconds(3600)) },
            space: space, retention: retention, metrics: NOOPMetricsHandler.instance, logger: Logger(label: "t"), commits: commits)
        return (guardian, space)
    }

    @Test func theKeepFreeFloorHoldsAfterEveryCommit() async throws {
        let f = try StoreFixture()
        let floor: Int64 = 4_000_000
        let (guardian, space) = Self.disk(f, floor: floor)
        var lowest = Int64.max
        for n in 0..<120 {
            try await Self.append(f, n)
            lowest = min(lowest, space.free)
            guardian.check()
            await guardian.keepFloor()
            lowest = min(lowest, space.free)
        }
        #expect(lowest >= floor - floor / 10, "free space fell to \(lowest) against a floor of \(floor)")
        #expect(guardian.refusal() == nil)
        await f.close()
    }

    @Test func commitsWakeTheDiskGuardWithoutItsTimer() async throws {
        let f = try StoreFixture()
        let floor: Int64 = 4_000_000
        let store = f.store
        let (guardian, space) = Self.disk(f, floor: floor, commits: { store.commits() })
        let running = Task { try await guardian.run() }
        for n in 0..<100 { try await Self.append(f, n) }
        for _ in 0..<200 where space.free < floor {
            try await Task.sleep(for: .milliseconds(50))
        }
        running.cancel()
        #expect(space.free >= floor, "6 MB appended with 2 MB above the floor: \(space.free) bytes free against \(floor)")
        await f.close()
    }
}
