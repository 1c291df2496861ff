import Foundation
import TelemetryModel

/// The bounded hand-off between the ingest path (many submitters) and the mirror's single
/// sender thread, plus the mirror's counters.
///
/// One lock guards everything; the sender holds it only to take a batch or to report one,
/// never while talking to journald, so ``submit(_:)`` can wait at most for that bookkeeping
/// and never for the journal.
final class MirrorQueue: @unchecked Sendable {
    /// Where the sender is in its life.
    enum Phase {
        /// Taking entries and sending them as they come.
        case running
        /// Graceful shutdown: send what is queued until empty or the deadline, then exit.
        case flushing(deadline: ContinuousClock.Instant)
        /// Cancelled: drop what is queued and exit now.
        case stopping
        /// The sender has exited; new entries are dropped.
        case stopped
    }

    /// The counters as of the last finished batch.
    struct Counts {
        var sent: UInt64 = 0
        var failed: UInt64 = 0
        var dropped: UInt64 = 0
        var reachable: Bool
        var lastError: String?
    }

    private let condition = NSCondition()
    /// Reads the shutdown flush's deadline against the daemon's clock.
    private let clock: any WallClock
    // Everything below is guarded by `condition`.
    private var configuration: JournalMirrorConfiguration
    private var pending: [JournalEntry] = []
    /// Index of the oldest unsent entry in `pending` (the front is consumed by moving
    /// this, and compacted now and then, so taking a batch is O(batch)).
    private var head = 0
    /// Entries of the batch the sender holds: still counted against the capacity.
    private var inFlight = 0
    private var phase = Phase.running
    private var senderWaiting = false
    private var counts: Counts

    init(configuration: JournalMirrorConfiguration, reachable: Bool, clock: any WallClock) {
        self.configuration = configuration
        self.clock = clock
        self.counts = Counts(reachable: reachable)
    }

    var currentConfiguration: JournalMirrorConfiguration {
        condition.withLock { configuration }
    }

    func apply(_ newConfiguration: JournalMirrorConfiguration) {
        condition.withLock { configuration = newConfiguration }
    }

    /// Queues as many entries as fit; the rest (the newest) are dropped.
    /// - Returns: how many were dropped, and the queue depth after.
    func submit(_ entries: [JournalEntry]) -> (dropped: Int, depth: Int) {
        condition.lock()
        defer { condition.unlock() }
        guard configuration.enabled else { return (0, depthLocked) }
        let room: Int
        switch phase {
        case .running, .flushing: room = max(0, configuration.queueCapacity - depthLocked)
        case .stopping, .stopped: room = 0
        }
        let taken = min(room, entries.count)
        if taken == entries.count {
            pending.append(contentsOf: entries)
        } else {
            pending.append(contentsOf: entries[..<taken])
        }
        let dropped = entries.count - taken
        counts.dropped += UInt64(dropped)
        if taken > 0, senderWaiting {
            senderWaiting = false
            condition.signal()
        }
        return (dropped, depthLocked)
    }

    /// What the sender gets from ``nextBatch(maxCount:)``.
    enum Work {
        /// Entries to send, oldest first.
        case send([JournalEntry])
        /// Exit: the flush finished or a stop was requested; `dropped` entries were still
        /// queued and are counted as dropped.
        case exit(dropped: Int)
    }

    /// Blocks the sender until there is work, then hands it up to `maxCount` entries.
    func nextBatch(maxCount: Int) -> Work {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch phase {
            case .stopped:
                return .exit(dropped: 0)
            case .stopping:
                return .exit(dropped: finishLocked())
            case .flushing(let deadline):
                if queuedLocked == 0 || clock.monotonicNow() >= deadline {
                    return .exit(dropped: finishLocked())
                }
            case .running:
                break
            }
            if queuedLocked > 0 {
                let end = min(pending.count, head + maxCount)
                // A copy, so `pending` stays uniquely referenced and appends never copy it.
                let batch = Array(pending[head..<end])
                head = end
                inFlight = batch.count
                compactLocked()
                return .send(batch)
            }
            senderWaiting = true
            condition.wait()
            senderWaiting = false
        }
    }

    /// Whether the sender should stop sending its current batch: cancelled, or the
    /// shutdown flush ran out of time.
    var shouldAbandonBatch: Bool {
        condition.withLock {
            switch phase {
            case .running: false
            case .flushing(let deadline): clock.monotonicNow() >= deadline
            case .stopping, .stopped: true
            }
        }
    }

    /// Records the outcome of the batch the sender held.
    /// - Returns: the queue depth after.
    func finishBatch(
        sent: Int, failed: Int, abandoned: Int, reachable: Bool, lastError: String?
    ) -> Int {
        condition.withLock {
            inFlight = 0
            counts.sent += UInt64(sent)
            counts.failed += UInt64(failed)
            counts.dropped += UInt64(abandoned)
            counts.reachable = reachable
            if let lastError { counts.lastError = lastError }
            return depthLocked
        }
    }

    /// Graceful shutdown: flush until empty or `deadline`. A stop already requested wins.
    func requestFlush(deadline: ContinuousClock.Instant) {
        condition.withLock {
            guard case .running = phase else { return }
            phase = .flushing(deadline: deadline)
            condition.broadcast()
        }
    }

    /// Cancellation: drop what is queued and let the sender exit at once.
    /// - Returns: whether the sender was still running (had not exited yet).
    @discardableResult
    func requestStop() -> Bool {
        condition.withLock {
            defer { condition.broadcast() }
            switch phase {
            case .running, .flushing:
                phase = .stopping
                return true
            case .stopping:
                return true
            case .stopped:
                return false
            }
        }
    }

    var snapshot: (counts: Counts, depth: Int, enabled: Bool) {
        condition.withLock { (counts, depthLocked, configuration.enabled) }
    }

    // MARK: - Locked helpers

    private var queuedLocked: Int { pending.count - head }
    private var depthLocked: Int { queuedLocked + inFlight }

    /// Marks the sender finished, counting what is still queued as dropped.
    /// - Returns: how many that was.
    private func finishLocked() -> Int {
        let left = queuedLocked
        counts.dropped += UInt64(left)
        pending.removeAll()
        head = 0
        phase = .stopped
        return left
    }

    private func compactLocked() {
        if head == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 4096)
            head = 0
        } else if head >= 4096, head * 2 >= pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }
}
