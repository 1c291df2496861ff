import Foundation
import Logging
import Metrics
public import ServiceLifecycle
public import StoreCore
import Synchronization
import TelemetryModel

/// Turns many concurrent appends into few durable commits. Requests encode their batches
/// (`PreparedBatch`), enqueue and wait; the committer takes everything queued, writes it in one transaction per environment (one
/// fsync for many requests), then wakes every waiter. While a commit runs, new requests
/// pile up and form the next group, so batching grows with load and durability costs one
/// fsync per group rather than one per request. A request's kinds are written in the same
/// transaction of each environment, and a request with records for both environments is
/// committed all or nothing through `CrossEnvironmentCommit`.
public final class GroupCommitter: Service, CommitQueue, Sendable {
    struct Pending: Sendable {
        var request: AppendRequest
        var environments: [TelemetryEnvironment]
        /// Each environment's groups, one per kind, with their batches prepared.
        var groups: [TelemetryEnvironment: [BatchCommitter.Group]]
        var continuation: CheckedContinuation<AppendOutcomes, any Error>

        var isCrossEnvironment: Bool { environments.count > 1 }
    }

    struct State {
        var pending: [Pending] = []
        var pendingRecords = 0
        var closed = false
        /// When the commit in progress started (nil when idle): the watchdog's liveness signal.
        var commitStartedAt: ContinuousClock.Instant?
        /// A cross-environment stage was neither published nor discarded (its step failed):
        /// resolve it before the staging environment commits anything else.
        var stageUnresolved = false
    }

    private let state = Mutex(State())
    private let committed = Atomic<Int>(0)
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation
    private let databases: PerEnvironment<EnvironmentDatabase>
    private let crossEnvironment: CrossEnvironmentCommit
    private let faults: any CommitFaultInjector
    private let clock: any WallClock
    private let broadcaster: CommitBroadcaster
    private let configuration: StoreConfiguration
    private let logger: Logger

    private let batchesCommitted: Counter
    private let rawBytes: Counter
    private let storedBytes: Counter
    private let commitLatency: Timer
    private let queueDepth: Gauge
    private let compressionRatio: Gauge

    init(
        databases: PerEnvironment<EnvironmentDatabase>, broadcaster: CommitBroadcaster,
        configuration: StoreConfiguration, faults: any CommitFaultInjector, clock: any WallClock,
        metrics: any MetricsFactory, logger: Logger
    ) {
        batchesCommitted = Counter(label: MetricName.batchesCommitted.rawValue, factory: metrics)
        rawBytes = Counter(label: MetricName.storeRawBytes.rawValue, factory: metrics)
        storedBytes = Counter(label: MetricName.storeCompressedBytes.rawValue, factory: metrics)
        commitLatency = Timer(label: MetricName.commitDuration.rawValue, factory: metrics)
        queueDepth = Gauge(label: MetricName.commitQueueRecords.rawValue, factory: metrics)
        compressionRatio = Gauge(label: MetricName.compressionRatio.rawValue, factory: metrics)
        self.databases = databases
        crossEnvironment = CrossEnvironmentCommit(databases: databases)
        self.faults = faults
        self.clock = clock
        self.broadcaster = broadcaster
        self.configuration = configuration
        self.logger = logger
        (doorbell, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a request and returns once all of it is durable, or throws with none of it stored.
    func submit(_ request: AppendRequest) async throws -> AppendOutcomes {
        let environments = request.environments
        guard !environments.isEmpty else { return AppendOutcomes() }
        if let incident = request.incident, environments != [incident.env] {
            throw StoreError.invalidRequest("a diagnostic upload's records must all be in its incident's environment")
        }
        if request.incident != nil, request.records.contains(where: { $0.key != AppendRequest.incidentKind && !$0.value.isEmpty }) {
            throw StoreError.invalidRequest("a diagnostic upload's records must all be log records")
        }
        let count = request.recordCount
        // Encoding and compressing happen here, in the request's task and concurrently with
        // other requests, so the single writer only inserts and fsyncs.
        var groups: [TelemetryEnvironment: [BatchCommitter.Group]] = [:]
        for env in environments {
            groups[env] = try request.groups(for: env).map {
                try $0.prepared(configuration, knownDevices: databases[env].committer.deviceIndex.cache)
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            let queued = state.withLock { s -> Int? in
                guard !s.closed else { return nil }
                s.pending.append(Pending(request: request, environments: environments, groups: groups, continuation: continuation))
                s.pendingRecords += count
                return s.pendingRecords
            }
            if let queued {
                queueDepth.record(queued)
                ring.yield()
            } else {
                continuation.resume(throwing: StoreError.shuttingDown)
            }
        }
    }

    /// Records made durable since start (for the systemd status line's rate).
    public var committedRecords: Int { committed.load(ordering: .relaxed) }

    /// Records waiting for the next commit: the queue depth backpressure looks at.
    public var queuedRecords: Int { state.withLock { $0.pendingRecords } }

    /// False when a commit has been running longer than `wedgedAfterSeconds`: the systemd
    /// watchdog stops being fed and systemd restarts a daemon whose storage hung.
    public func isHealthy() -> Bool {
        state.withLock { s in
            guard let started = s.commitStartedAt else { return true }
            return clock.monotonicNow() - started < .seconds(configuration.wedgedAfterSeconds)
        }
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            for await _ in doorbell {
                await commitPending()
            }
        } onGracefulShutdown: {
            // The HTTP server stops before us (ServiceGroup order), so nothing new arrives;
            // refuse latecomers and let the loop drain what is queued.
            self.state.withLock { $0.closed = true }
            self.ring.finish()
        }
        await commitPending()
        broadcaster.finishAll()
    }

    /// Stops taking appends and drains: for tests and embedders without a ServiceGroup.
    public func close() async {
        state.withLock { $0.closed = true }
        ring.finish()
        await commitPending()
    }

    private func commitPending() async {
        let taken = state.withLock { s -> [Pending] in
            defer {
                s.pending.removeAll(keepingCapacity: true)
                s.pendingRecords = 0
            }
            if !s.pending.isEmpty { s.commitStartedAt = clock.monotonicNow() }
            return s.pending
        }
        guard !taken.isEmpty else { return }
        queueDepth.record(0)
        defer { state.withLock { $0.commitStartedAt = nil } }
        var cycle = CommitCycle(taken)
        await commitStaging(&cycle)
        await commitDeciding(&cycle)
        await settleStage(&cycle)
    }

    /// Steps 1-2: the staging environment's single-environment requests become visible and
    /// the cross-environment requests' parts are staged, in one transaction.
    private func commitStaging(_ cycle: inout CommitCycle) async {
        let env = CrossEnvironmentCommit.staging
        let live = cycle.live(in: env)
        guard !live.isEmpty else { return }
        if state.withLock({ $0.stageUnresolved }) {
            do {
                announce(env: env, try await crossEnvironment.recover())
                state.withLock { $0.stageUnresolved = false }
            } catch {
                logger.error(
                    "an interrupted cross-environment commit could not be resolved; refusing writes to \(env)",
                    metadata: ["error": "\(error)"])
                for i in live { cycle.failures[i] = error }
                cycle.answerFinished()
                return
            }
        }
        var plan = BatchCommitter.Plan()
        let visible = live.filter { !cycle.requests[$0].isCrossEnvironment }
        let staged = live.filter { cycle.requests[$0].isCrossEnvironment }
        plan.visible = visible.flatMap { cycle.requests[$0].groups[env] ?? [] }
        plan.staged = staged.flatMap { cycle.requests[$0].groups[env] ?? [] }
        plan.stage = cycle.stage
        do {
            let result = try await commit(plan, env: env)
            cycle.record(result.visible, of: visible, in: env)
            cycle.record(result.staged, of: staged, in: env)
            cycle.staged = staged
            if !staged.isEmpty { try faults.reached(.afterStaging) }
        } catch {
            logger.error(
                "commit failed; the waiting requests are answered with an error", metadata: ["env": "\(env)", "error": "\(error)"])
            for i in live where cycle.outcomes[i][env] == nil || cycle.requests[i].isCrossEnvironment { cycle.failures[i] = error }
        }
        cycle.answerFinished()
    }

    /// Step 3: the deciding environment's records, with the decision row that commits this
    /// cycle's staged requests.
    private func commitDeciding(_ cycle: inout CommitCycle) async {
        let env = CrossEnvironmentCommit.deciding
        let live = cycle.live(in: env)
        guard !live.isEmpty else { return }
        var plan = BatchCommitter.Plan()
        plan.visible = live.flatMap { cycle.requests[$0].groups[env] ?? [] }
        let decides = live.contains { cycle.requests[$0].isCrossEnvironment }
        if decides {
            plan.decides = cycle.stage
            // Earlier decisions matter only while their stage may still be unresolved.
            plan.forgetEarlierDecisions = !state.withLock { $0.stageUnresolved }
        }
        let faults = self.faults
        do {
            let result = try await commit(plan, env: env) {
                if decides { try faults.reached(.beforeDecisionCommit) }
            }
            cycle.record(result.visible, of: live, in: env)
            cycle.decided = decides
        } catch {
            logger.error(
                "commit failed; the waiting requests are answered with an error", metadata: ["env": "\(env)", "error": "\(error)"])
            for i in live { cycle.failures[i] = error }
        }
        cycle.answerFinished()
    }

    /// Step 4: publish the staged parts when the decision committed, discard them when not.
    /// A failure here leaves the stage for `recover` (next cycle or next open); it does not
    /// change the answer, which the decision (or its absence) already fixed.
    private func settleStage(_ cycle: inout CommitCycle) async {
        defer { cycle.answerAll() }
        guard let stage = cycle.stage, !cycle.staged.isEmpty else { return }
        let env = CrossEnvironmentCommit.staging
        do {
            if cycle.decided {
                try faults.reached(.afterDecision)
                announce(env: env, try await crossEnvironment.publish(stage))
            } else {
                try await crossEnvironment.discard(stage)
            }
        } catch {
            state.withLock { $0.stageUnresolved = true }
            logger.error(
                "a cross-environment stage could not be settled now; it is settled before the next commit",
                metadata: ["stage": "\(stage)", "decided": "\(cycle.decided)", "error": "\(error)"])
        }
    }

    /// One environment's transaction, with its metrics and the followers' notice.
    private func commit(
        _ plan: BatchCommitter.Plan, env: TelemetryEnvironment, beforeCommit: @escaping @Sendable () throws -> Void = {}
    ) async throws -> BatchCommitter.Committed {
        let start = clock.monotonicNow()
        let faults = self.faults
        let result = try await databases[env].committer.commit(
            plan, nowMs: clock.nowMilliseconds(), betweenKinds: { try faults.reached(.betweenKinds) }, beforeCommit: beforeCommit)
        commitLatency.record(duration: clock.monotonicNow() - start)
        batchesCommitted.increment(by: result.batches)
        rawBytes.increment(by: result.rawBytes)
        storedBytes.increment(by: result.storedBytes)
        if result.storedBytes > 0 {
            compressionRatio.record(Double(result.rawBytes) / Double(result.storedBytes))
        }
        committed.add(result.visible.reduce(0) { $0 + $1.stored }, ordering: .relaxed)
        if !result.kinds.isEmpty {
            broadcaster.publish(CommitNotice(env: env, kinds: result.kinds, lastId: result.lastId))
        }
        return result
    }

    /// Counts and tells followers about records a settled stage made visible.
    private func announce(env: TelemetryEnvironment, _ published: CrossEnvironmentCommit.Published) {
        committed.add(published.records, ordering: .relaxed)
        if !published.kinds.isEmpty {
            broadcaster.publish(CommitNotice(env: env, kinds: published.kinds, lastId: published.lastId))
        }
    }
}
