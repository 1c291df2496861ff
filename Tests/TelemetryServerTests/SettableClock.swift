import Synchronization
import TelemetryModel

/// Wall time a test sets (receive times, relative windows, follow lateness); durations run
/// on the real monotonic clock.
final class SettableClock: WallClock {
    private let now: Mutex<Int64>
    init(_ ms: Int64) { now = Mutex(ms) }
    func set(_ ms: Int64) { now.withLock { $0 = ms } }
    func advance(by ms: Int64) { now.withLock { $0 += ms } }
    func nowMilliseconds() -> Int64 { now.withLock { $0 } }
    func monotonicNow() -> ContinuousClock.Instant { .now }
}
