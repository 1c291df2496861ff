import Foundation
import Synchronization
import TelemetryModel

/// A clock that moves only when the test moves it, wall and monotonic time together: for
/// budgets, bounds and windows (rate limits, log throttling, the read fence) a test checks
/// without sleeping. Pass `advance` where the code under test takes a sleep function.
public final class ManualClock: WallClock {
    private let state: Mutex<(wall: Int64, instant: ContinuousClock.Instant)>

    /// Starts at `wallMilliseconds` (now unless given) and the current monotonic instant.
    public init(wallMilliseconds: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) {
        state = Mutex((wallMilliseconds, ContinuousClock.now))
    }

    public func advance(_ d: Duration) {
        state.withLock {
            $0.instant += d
            $0.wall += d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        }
    }

    public func monotonicNow() -> ContinuousClock.Instant { state.withLock { $0.instant } }
    public func nowMilliseconds() -> Int64 { state.withLock { $0.wall } }
}
