import Foundation

/// Wall-clock milliseconds behind a protocol so tests can pin `receivedAt` and relative
/// time filters.
public protocol WallClock: Sendable {
    func nowMilliseconds() -> Int64
}

public struct SystemWallClock: WallClock {
    public init() {}
    public func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
