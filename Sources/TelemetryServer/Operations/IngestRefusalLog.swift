import Logging
import Synchronization
import Systemd
import TelemetryModel

/// Logs ingest refusals (429, 503, 507) under the `ingestRefused` `MESSAGE_ID`, at most once
/// per reason per `window`: a refusal storm is thousands of requests a second, and one line
/// each would flood the journal and push out everything else. The first refusal of a reason
/// is logged at once; the ones after it in the window are counted and reported, with their
/// number, on the first refusal after the window. Exact counts are always in
/// `mamtelemetry_ingest_refused_total`.
final class IngestRefusalLog: Sendable {
    private struct Window {
        var loggedAt: ContinuousClock.Instant
        var suppressed: Int
    }

    private let logger: Logger
    private let window: Duration
    private let clock: any WallClock
    private let windows = Mutex<[String: Window]>([:])

    init(logger: Logger, window: Duration = .seconds(60), clock: any WallClock) {
        self.logger = logger
        self.window = window
        self.clock = clock
    }

    /// Notes one refused request; logs it unless this reason was logged within the window.
    /// - Parameters:
    ///   - reason: a stable code (`storage_full`, `unavailable`, `rate_limited`).
    ///   - status: the HTTP status answered.
    ///   - message: the answer's message, which names the limit.
    func refused(reason: String, status: Int, message: String) {
        let at = clock.monotonicNow()
        let suppressed: Int? = windows.withLock { all in
            if var w = all[reason], at - w.loggedAt < window {
                w.suppressed += 1
                all[reason] = w
                return nil
            }
            let before = all[reason]?.suppressed ?? 0
            all[reason] = Window(loggedAt: at, suppressed: 0)
            return before
        }
        guard let suppressed else { return }
        var metadata: Logger.Metadata = ["reason": "\(reason)", "status": "\(status)", "detail": "\(message)"]
        if suppressed > 0 { metadata["refused_since_last_line"] = "\(suppressed)" }
        logger.warning(
            "ingest refused (\(status) \(reason)); clients keep their data and retry",
            metadata: .messageID(.ingestRefused, metadata))
    }
}
