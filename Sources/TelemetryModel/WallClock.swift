import Foundation

/// The daemon's one source of time, passed to every component that reads it, so tests can
/// pin receive times, retention cut-offs and relative query windows, and no component
/// reads the system clock on its own.
public protocol WallClock: Sendable {
    /// Wall-clock milliseconds since the Unix epoch: receive times, retention cut-offs,
    /// relative query times, drop-ledger hours.
    func nowMilliseconds() -> Int64

    /// A monotonic instant for measuring how long something took (a commit, a rate-limit
    /// refill, a log window): unlike wall time it never jumps when the system clock is set.
    func monotonicNow() -> ContinuousClock.Instant
}

/// The system's clocks: `Date` for wall time, `ContinuousClock` for durations.
public struct SystemWallClock: WallClock {
    public init() {}
    public func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
    public func monotonicNow() -> ContinuousClock.Instant { .now }
}

extension ContinuousClock.Instant {
    /// Seconds from `earlier` to this instant, as a `Double`.
    public func seconds(since earlier: ContinuousClock.Instant) -> Double {
        let d = self - earlier
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
