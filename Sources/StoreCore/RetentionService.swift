import Foundation
public import Logging
public import Metrics
public import ServiceLifecycle
import Synchronization
public import TelemetryModel

/// Applies the retention policy (age and size cap per environment): every
/// `passIntervalSeconds`, whenever an environment's database has grown by
/// ``RetentionPolicy/growthStep`` of its cap since its last pass (looked at after every commit,
/// so the cap holds as data arrives, the way journald enforces `SystemMaxUse=` as it writes),
/// on demand after a reload, and — called by the disk guard — deletes the oldest data when the
/// filesystem is below its keep-free floor. Timed and requested passes and the disk guard's
/// deletions give the freed pages back to the filesystem, which is what lets a disk past its
/// high-water mark recover by itself; a growth pass leaves them in the file, where the commits
/// that follow reuse them.
public final class RetentionService: Service, Sendable {
    /// What started a pass, as the passes metric labels it.
    public enum Trigger: String, Sendable {
        /// The pass interval elapsed.
        case timer
        /// The environment grew by a step of its cap since its last pass.
        case growth
        /// Asked for (a reload, a test).
        case demand
    }

    /// How much free space is still missing, re-measured after every deletion round.
    public struct SpaceNeed: Sendable, Hashable {
        /// Bytes short of the target (nothing to do when zero or less).
        public var missingBytes: Int64
        /// Bytes free now: bounds how much one round may delete, because moving pages to
        /// truncate the file goes through the WAL first.
        public var freeBytes: Int64

        public init(missingBytes: Int64, freeBytes: Int64) {
            self.missingBytes = missingBytes
            self.freeBytes = freeBytes
        }
    }

    private let store: any RetentionStore
    private let policy: @Sendable () -> RetentionPolicy
    private let commits: (@Sendable () -> AsyncStream<CommitNotice>)?
    private let logger: Logger
    private let clock: any WallClock
    private let metrics: any MetricsFactory
    /// Per environment, its used bytes when its last pass ended: growth is measured from there.
    private let grownFrom = Mutex<[TelemetryEnvironment: Int64]>([:])

    /// - Parameters:
    ///   - policy: read at every pass, so a reloaded policy applies at the next one.
    ///   - commits: the store's commit notices (nil: passes run on the timer only).
    public init(
        store: any RetentionStore, policy: @escaping @Sendable () -> RetentionPolicy,
        commits: (@Sendable () -> AsyncStream<CommitNotice>)? = nil, logger: Logger, clock: any WallClock, metrics: any MetricsFactory
    ) {
        self.metrics = metrics
        self.store = store
        self.policy = policy
        self.commits = commits
        self.logger = logger
        self.clock = clock
    }

    /// A service with a fixed policy.
    public convenience init(
        store: any RetentionStore, policy: RetentionPolicy, commits: (@Sendable () -> AsyncStream<CommitNotice>)? = nil, logger: Logger,
        clock: any WallClock, metrics: any MetricsFactory
    ) {
        self.init(store: store, policy: { policy }, commits: commits, logger: logger, clock: clock, metrics: metrics)
    }

    /// One pass of the age and size limits over both environments.
    @discardableResult
    public func sweep(_ trigger: Trigger = .demand) async throws -> [TelemetryEnvironment: RetentionResult] {
        var out: [TelemetryEnvironment: RetentionResult] = [:]
        let policy = policy()
        for env in TelemetryEnvironment.allCases {
            out[env] = try await pass(policy.limits(for: env), env: env, trigger: trigger)
        }
        return out
    }

    /// Runs a pass for each environment whose used bytes grew by ``RetentionPolicy/growthStep``
    /// of its cap since its last pass; what the service does after every commit. Returns the
    /// passes it ran.
    @discardableResult
    public func checkGrowth() async throws -> [TelemetryEnvironment: RetentionResult] {
        var out: [TelemetryEnvironment: RetentionResult] = [:]
        let policy = policy()
        for env in TelemetryEnvironment.allCases {
            let limits = policy.limits(for: env)
            guard let cap = limits.maxBytes, let used = try await store.usedBytes(env: env) else { continue }
            let step = RetentionPolicy.growthStep(of: cap)
            let from = grownFrom.withLock { $0[env] } ?? 0
            guard used - from >= step else { continue }
            out[env] = try await pass(limits, env: env, trigger: .growth)
        }
        return out
    }

    private func pass(_ limits: RetentionPolicy.Limits, env: TelemetryEnvironment, trigger: Trigger) async throws -> RetentionResult {
        // A growth pass leaves the pages it freed to the commits that follow (the cap counts
        // live pages); the timer's passes and the disk guard give free pages back.
        let started = clock.monotonicNow()
        let r = try await store.applyRetention(limits, env: env, nowMs: clock.nowMilliseconds(), returnFreeSpace: trigger != .growth)
        let took = clock.monotonicNow() - started
        if let used = try await store.usedBytes(env: env) {
            grownFrom.withLock { $0[env] = Self.growthBase(used: used, cap: limits.maxBytes, deleted: r.batches > 0) }
        }
        Counter(
            label: MetricName.retentionPasses.rawValue, dimensions: [("env", env.rawValue), ("trigger", trigger.rawValue)],
            factory: metrics
        ).increment()
        if r.batches > 0 || r.retryIDs > 0 {
            count(r, env: env)
            logger.info(
                "retention removed old data",
                metadata: [
                    "env": "\(env)", "trigger": "\(trigger.rawValue)", "batches": "\(r.batches)", "records": "\(r.records)",
                    "retryIds": "\(r.retryIDs)", "bytesReturned": "\(r.bytesReturned)",
                    "ms": "\(took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000)",
                ])
        }
        return r
    }

    /// Where the next growth step is measured from after a pass that left `used` bytes: at
    /// most the cap less a step, so the next commit that finds the store at its cap runs a
    /// pass. A pass deletes down to a step below the cap, but the commits that go through
    /// beside its steps (seconds of them when each step waits for the writer behind queued
    /// commits) can leave the store above that, or above the cap; measured from there, the
    /// next pass waited for a whole step more, and the debug soak on a slow machine passed
    /// the cap by 10%. A pass that deleted nothing and left the store over its cap (nothing
    /// of any class left to delete) measures from where it ended, so a store that cannot get
    /// under its cap does not run a pass after every commit.
    static func growthBase(used: Int64, cap: Int64?, deleted: Bool) -> Int64 {
        guard let cap, deleted || used <= cap else { return used }
        return min(used, cap - RetentionPolicy.growthStep(of: cap))
    }

    /// Frees filesystem space until `need` reports none missing or nothing is left to
    /// delete: first what costs no data (free pages, the WAL), then the oldest batches in
    /// ``RetentionClass`` order, taking from whichever environment holds the oldest batch
    /// of the class. Each round deletes at most half the free space's worth, so the WAL
    /// that truncating the file needs always fits.
    @discardableResult
    public func makeRoom(_ need: @Sendable () -> SpaceNeed?) async throws -> RetentionResult {
        var total = RetentionResult()
        for env in TelemetryEnvironment.allCases {
            total.bytesReturned += try await store.returnFreeSpace(env: env)
        }
        while let need = need(), need.missingBytes > 0 {
            guard let (env, retentionClass) = try await oldestCandidate() else {
                // Said once, by the pass that emptied the store; later passes find nothing
                // to delete and stay quiet (the high-water line already told the operator).
                if total.batches > 0 {
                    logger.warning(
                        "retention deleted all stored data and the disk is still below its keep-free floor: something else fills it",
                        metadata: ["missingBytes": "\(need.missingBytes)"])
                }
                break
            }
            let chunk = max(256 << 10, min(need.missingBytes, need.freeBytes / 2))
            let r = try await store.deleteOldest(retentionClass, env: env, atLeast: chunk)
            count(r, env: env)
            total += r
        }
        if total.batches > 0 {
            logger.notice(
                "retention deleted the oldest data to keep free space on the disk",
                metadata: ["batches": "\(total.batches)", "records": "\(total.records)", "bytesReturned": "\(total.bytesReturned)"])
        }
        return total
    }

    /// The environment holding the oldest batch of the first class that has any.
    private func oldestCandidate() async throws -> (TelemetryEnvironment, RetentionClass)? {
        for retentionClass in RetentionClass.allCases {
            var best: (env: TelemetryEnvironment, receivedAt: Int64)?
            for env in TelemetryEnvironment.allCases {
                guard let oldest = try await store.oldestReceivedAt(retentionClass, env: env) else { continue }
                if best == nil || oldest < best!.receivedAt { best = (env, oldest) }
            }
            if let best { return (best.env, retentionClass) }
        }
        return nil
    }

    private func count(_ r: RetentionResult, env: TelemetryEnvironment) {
        guard r.records > 0 else { return }
        Counter(label: MetricName.retentionDeletedRecords.rawValue, dimensions: [("env", env.rawValue)], factory: metrics).increment(
            by: r.records)
    }

    /// Passes at start, on the timer and on growth, until shutdown. A failed pass is logged
    /// and the next wake-up tries again.
    public func run() async throws {
        let wakeups = Wakeups()
        let commits = self.commits?()
        wakeups.ring(.timer)
        await cancelWhenGracefulShutdown {
            await wakeups.run(interval: { .seconds(max(1, self.policy().passIntervalSeconds)) }, commits: commits) { reasons in
                do {
                    if reasons.contains(.timer) {
                        try await self.sweep(.timer)
                    } else {
                        try await self.checkGrowth()
                    }
                } catch is CancellationError {
                    // Shutting down: the pass's transaction rolled back or committed whole.
                } catch {
                    self.logger.error("retention pass failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
