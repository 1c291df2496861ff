import Foundation

/// How many cases a seeded property test runs: its CI default (a few seconds), times
/// `MAM_PROPERTY_SCALE` when set (e.g. `MAM_PROPERTY_SCALE=100` for a long local run).
/// `MAM_PROPERTY_SEED` replaces the default seed, to explore or to replay a reported failure.
public enum PropertyScale {
    public static func cases(_ ciDefault: Int) -> Int {
        let scale = ProcessInfo.processInfo.environment["MAM_PROPERTY_SCALE"].flatMap(Int.init) ?? 1
        return ciDefault * max(scale, 1)
    }

    public static func seed(_ ciDefault: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["MAM_PROPERTY_SEED"].flatMap { UInt64($0) } ?? ciDefault
    }
}
