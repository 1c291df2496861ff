import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization
import TelemetryModel

/// Turns many concurrent appends into few durable commits. Requests enqueue and wait; the
/// committer takes everything queued, writes it in one transaction per environment (one
/// fsync for many requests), then wakes every waiter. While a commit runs, new requests
/// pile up and form the next group, so batching grows with load and durability costs one
/// fsync per group rather than one per request.
public final class GroupCommitter: Service, Sendable {
    struct Pending: Sendable {
        var group: EnvironmentDatabase.Group
        var env: TelemetryEnvironment
        var continuation: CheckedContinuation<AppendOutcome, Error>
    }

    struct State {
        var pending: [Pending] = []
        var pendingRecords = 0
        var closed = false
        /// When the commit in progress started (nil when idle): the watchdog's liveness signal.
        var commitStartedAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let committed = Atomic<Int>(0)
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation
    private let databases: [TelemetryEnvironment: EnvironmentDatabase]
    private let broadcaster: CommitBroadcaster
    private let configuration: StoreConfiguration
    private let logger: Logger

    private let batchesCommitted = Counter(label: "mamtelemetry_batches_committed_total")
    private let rawBytes = Counter(label: "mamtelemetry_store_raw_bytes_total")
    private let storedBytes = Counter(label: "mamtelemetry_store_compressed_bytes_total")
    private let commitLatency = Timer(label: "mamtelemetry_commit_duration_seconds")
    private let queueDepth = Gauge(label: "mamtelemetry_commit_queue_records")
    private let compressionRatio = Gauge(label: "mamtelemetry_compression_ratio")

    init(
        databases: [TelemetryEnvironment: EnvironmentDatabase], broadcaster: CommitBroadcaster,
        configuration: StoreConfiguration, logger: Logger
    ) {
        self.databases = databases
        self.broadcaster = broadcaster
        self.configuration = configuration
        self.logger = logger
        (doorbell, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a group and returns once it is durable (or failed).
    func submit(_ group: EnvironmentDatabase.Group, env: TelemetryEnvironment) async throws -> AppendOutcome {
        try await withCheckedThrowingContinuation { continuation in
            let queued = state.withLock { s -> Int? in
                guard !s.closed else { return nil }
                s.pending.append(Pending(group: group, env: env, continuation: continuation))
                s.pendingRecords += group.records.count
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
            return ContinuousClock.now - started < .seconds(configuration.wedgedAfterSeconds)
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
            if !s.pending.isEmpty { s.commitStartedAt = .now }
            return s.pending
        }
        guard !taken.isEmpty else { return }
        queueDepth.record(0)
        defer { state.withLock { $0.commitStartedAt = nil } }
        for env in TelemetryEnvironment.allCases {
            let mine = taken.filter { $0.env == env }
            guard !mine.isEmpty, let db = databases[env] else { continue }
            let start = ContinuousClock.now
            do {
                let result = try await db.commit(mine.map(\.group))
                commitLatency.recordInterval(since: start)
                batchesCommitted.increment(by: result.batches)
                rawBytes.increment(by: result.rawBytes)
                storedBytes.increment(by: result.storedBytes)
                if result.storedBytes > 0 {
                    compressionRatio.record(Double(result.rawBytes) / Double(result.storedBytes))
                }
                committed.add(result.outcomes.reduce(0) { $0 + $1.stored }, ordering: .relaxed)
                for (pending, outcome) in zip(mine, result.outcomes) { pending.continuation.resume(returning: outcome) }
                if !result.kinds.isEmpty {
                    broadcaster.publish(CommitNotice(env: env, kinds: result.kinds, lastId: result.lastId))
                }
            } catch {
                logger.error("commit failed; the waiting requests are answered with an error", metadata: ["env": "\(env)", "error": "\(error)"])
                for pending in mine { pending.continuation.resume(throwing: error) }
            }
        }
    }
}

extension Timer {
    func recordInterval(since start: ContinuousClock.Instant) {
        let d = ContinuousClock.now - start
        recordNanoseconds(d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000)
    }
}
