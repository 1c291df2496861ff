import Foundation
public import Logging
public import Metrics
public import ServiceLifecycle
import Synchronization
public import TelemetryModel

/// Mirrors accepted diagnostic log records into the systemd journal, off the ingest path
/// (mirroring never blocks ingest; a slow journal is measured, not waited on).
///
/// Ingest calls ``submit(_:)``, which only appends to a bounded in-memory queue and
/// returns; a dedicated sender thread (not a Swift concurrency thread, since
/// `sd_journal_sendv` blocks while journald is behind and would starve the cooperative
/// pool) takes entries in order and sends them through the ``JournalSink``. When the
/// queue is full the newest entries are dropped and counted, so a stalled journald costs
/// bounded memory and never an ingest stall. When journald is absent the mirror says so
/// once, counts the failures and keeps going.
///
/// As a swift-service-lifecycle `Service`, ``run()`` lasts as long as the sender: on
/// graceful shutdown it sends what is queued (bounded by
/// ``JournalMirrorConfiguration/shutdownFlushTimeout``) and returns; on cancellation it
/// drops the queue and returns at once. Put it *before* the HTTP server in the
/// `ServiceGroup`: services stop in reverse order, so ingest has drained before the
/// mirror flushes.
public final class JournalMirror: Service, Sendable {
    /// Entries the sender takes per lock acquisition: large enough that the lock is rarely
    /// touched, small enough that a shutdown deadline or cancellation is noticed quickly.
    static let batchSize = 128

    private let queue: MirrorQueue
    private let sink: any JournalSink
    private let logger: Logger
    private let metrics: JournalMirrorMetrics
    private let clock: any WallClock
    private let started = Atomic<Bool>(false)

    /// - Parameters:
    ///   - configuration: enabled, minimum level, queue capacity, flush timeout.
    ///   - sink: where entries go; journald's native protocol unless a test injects one.
    ///   - logger: the daemon's logger, told once when the journal becomes unavailable.
    ///   - metricsFactory: the factory for the mirror's metrics (the daemon's Prometheus
    ///     backend, passed in).
    ///   - clock: the daemon's clock: send durations, retry backoff, the shutdown deadline.
    ///   - initiallyReachable: what ``status`` says before the first send; by default
    ///     whether journald's socket answers now.
    public init(
        configuration: JournalMirrorConfiguration = JournalMirrorConfiguration(),
        sink: any JournalSink = NativeJournalSink(), logger: Logger,
        metricsFactory: any MetricsFactory, clock: any WallClock,
        initiallyReachable: Bool = JournalSocket.isReachable()
    ) {
        self.queue = MirrorQueue(configuration: configuration, reachable: initiallyReachable, clock: clock)
        self.clock = clock
        self.sink = sink
        self.logger = logger
        self.metrics = JournalMirrorMetrics(factory: metricsFactory)
    }

    /// The configuration in force.
    public var configuration: JournalMirrorConfiguration { queue.currentConfiguration }

    /// Replaces the configuration (on a config reload): enabled, minimum level and queue
    /// capacity take effect for the next submission (entries already queued are still
    /// sent; a smaller capacity only refuses new ones until the queue shrinks). The flush
    /// timeout and retry interval are read when ``run()`` starts.
    public func apply(_ configuration: JournalMirrorConfiguration) {
        queue.apply(configuration)
    }

    /// Whether a record at `level` would be mirrored, so ingest skips building its entry
    /// when it would not.
    public func shouldMirror(level: LogLevel) -> Bool {
        queue.currentConfiguration.shouldMirror(level: level)
    }

    /// Queues entries for the journal and returns at once: never blocks on journald.
    /// When the queue is full the entries that do not fit are dropped and counted
    /// (`mamtelemetry_journal_mirror_dropped_total`). Does nothing while disabled.
    public func submit(_ entries: [JournalEntry]) {
        guard !entries.isEmpty else { return }
        let (dropped, depth) = queue.submit(entries)
        if dropped > 0 { metrics.dropped.increment(by: dropped) }
        metrics.queueDepth.record(depth)
    }

    /// Queues one entry; see ``submit(_:)-([JournalEntry])``.
    public func submit(_ entry: JournalEntry) {
        submit([entry])
    }

    /// The mirror's state for `/readyz` and diagnostics.
    public var status: JournalMirrorStatus {
        let (counts, depth, enabled) = queue.snapshot
        return JournalMirrorStatus(
            enabled: enabled, reachable: counts.reachable, sent: counts.sent, failed: counts.failed,
            dropped: counts.dropped, queueDepth: depth, lastError: counts.lastError)
    }

    /// Runs the sender until graceful shutdown (flush, then return) or cancellation
    /// (drop the queue, return).
    ///
    /// `sd_journal_sendv` cannot be interrupted, so a journald that stopped reading could
    /// hold the sender in one send forever; `run()` therefore returns at the flush deadline
    /// (or at once on cancellation) even then, leaving the sender thread to notice the stop
    /// when that send returns, and counting what it never sent as dropped.
    /// - Throws: ``JournalMirrorError/alreadyRunning`` when called a second time.
    public func run() async throws {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
            throw JournalMirrorError.alreadyRunning
        }
        let queue = self.queue
        let logger = self.logger
        let flushTimeout = queue.currentConfiguration.shutdownFlushTimeout
        let finished = CompletionSignal()
        let giveUp = Mutex<Task<Void, Never>?>(nil)
        let thread = Thread { [self] in
            // Named from inside, through /proc, so `top -H` and `ps -L` show it: on Linux
            // Foundation keeps `Thread.name` to itself, and `pthread_setname_np` is not
            // visible to Swift (the kernel keeps 15 characters).
            try? Data("journal-mirror".utf8).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
            self.sendUntilDone()
            finished.fire()
        }
        thread.name = "journal-mirror"
        thread.start()
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await finished.wait()
            } onGracefulShutdown: {
                queue.requestFlush(deadline: self.clock.monotonicNow() + flushTimeout)
                let task = Task {
                    // A little past the deadline: the sender checks it between sends, so
                    // only a send that is stuck in journald gets here first.
                    try? await Task.sleep(for: flushTimeout + .milliseconds(250))
                    guard !Task.isCancelled, queue.requestStop() else { return }
                    logger.warning(
                        "journal mirror gave up waiting for journald at shutdown; unsent entries are counted as dropped")
                    finished.fire()
                }
                giveUp.withLock { $0 = task }
            }
        } onCancel: {
            queue.requestStop()
            finished.fire()
        }
        giveUp.withLock { $0?.cancel() }
    }

    /// The sender thread's loop: one batch at a time until told to exit.
    private func sendUntilDone() {
        var sender = EntrySender(
            sink: sink, logger: logger, metrics: metrics,
            reachable: queue.snapshot.counts.reachable,
            retryInterval: queue.currentConfiguration.unavailableRetryInterval, clock: clock)
        while true {
            switch queue.nextBatch(maxCount: Self.batchSize) {
            case .exit(let dropped):
                if dropped > 0 {
                    metrics.dropped.increment(by: dropped)
                    logger.warning(
                        "journal mirror stopped with entries still queued; they were dropped",
                        metadata: ["dropped": "\(dropped)"])
                }
                metrics.queueDepth.record(0)
                return
            case .send(let batch):
                let outcome = sender.send(batch) { self.queue.shouldAbandonBatch }
                let depth = queue.finishBatch(
                    sent: outcome.sent, failed: outcome.failed, abandoned: outcome.abandoned,
                    reachable: sender.reachable, lastError: outcome.lastError)
                if outcome.abandoned > 0 { metrics.dropped.increment(by: outcome.abandoned) }
                metrics.queueDepth.record(depth)
            }
        }
    }
}

/// Why ``JournalMirror/run()`` refused to run.
public enum JournalMirrorError: Error, Sendable, Hashable {
    /// `run()` was called on a mirror that is already running (or has run): a mirror has
    /// one sender and one life.
    case alreadyRunning
}
