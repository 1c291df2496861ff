import Logging
import Metrics
import TelemetryModel

/// The mirror's sending side, owned by its sender thread: sends a batch through the sink,
/// times every send, and keeps track of whether journald is there at all.
///
/// While journald is unreachable only one entry per retry interval is actually tried; the
/// others are counted as failed without a system call, so a daemon running outside systemd
/// pays nothing for the mirror and never retries in a loop. The outage is logged once when
/// it starts and once when it ends.
struct EntrySender {
    /// What became of one batch.
    struct Outcome {
        var sent = 0
        var failed = 0
        /// Entries not attempted because the sender was told to stop.
        var abandoned = 0
        var lastError: String?
    }

    let sink: any JournalSink
    let logger: Logger
    let metrics: JournalMirrorMetrics
    /// Whether journald took the last entry tried.
    private(set) var reachable: Bool
    let retryInterval: Duration
    private var outageAnnounced = false
    private var nextAttempt: ContinuousClock.Instant
    private let clock: any WallClock

    init(
        sink: any JournalSink, logger: Logger, metrics: JournalMirrorMetrics, reachable: Bool,
        retryInterval: Duration, clock: any WallClock
    ) {
        self.clock = clock
        nextAttempt = clock.monotonicNow()
        self.sink = sink
        self.logger = logger
        self.metrics = metrics
        self.reachable = reachable
        self.retryInterval = retryInterval
    }

    /// Sends `batch` in order; checks `shouldAbandon` between entries so a cancellation or
    /// an expired shutdown deadline is honoured even behind a slow journald.
    mutating func send(_ batch: [JournalEntry], shouldAbandon: () -> Bool) -> Outcome {
        var outcome = Outcome()
        for (index, entry) in batch.enumerated() {
            if shouldAbandon() {
                outcome.abandoned = batch.count - index
                break
            }
            let start = clock.monotonicNow()
            if !reachable && start < nextAttempt {
                outcome.failed += 1
                continue
            }
            let result = sink.send(entry)
            metrics.sendDuration.record(duration: clock.monotonicNow() - start)
            if result == 0 {
                outcome.sent += 1
                journalAnswered()
            } else {
                outcome.failed += 1
                outcome.lastError = "sd_journal_sendv: " + JournalSocket.describe(result)
                if JournalSocket.isUnavailableError(result) {
                    journalMissing(result, at: start)
                }
            }
        }
        if outcome.sent > 0 { metrics.sent.increment(by: outcome.sent) }
        if outcome.failed > 0 { metrics.failed.increment(by: outcome.failed) }
        return outcome
    }

    private mutating func journalMissing(_ result: Int32, at time: ContinuousClock.Instant) {
        reachable = false
        nextAttempt = time + retryInterval
        guard !outageAnnounced else { return }
        outageAnnounced = true
        logger.warning(
            "systemd journal unavailable; diagnostic log records are not mirrored until it returns (counted in mamtelemetry_journal_mirror_failed_total)",
            metadata: .messageID(
                .journalUnavailable,
                ["error": "\(JournalSocket.describe(result))", "socket": "\(JournalSocket.path)"]))
    }

    private mutating func journalAnswered() {
        reachable = true
        guard outageAnnounced else { return }
        outageAnnounced = false
        logger.notice("systemd journal reachable again; mirroring diagnostic log records")
    }
}
