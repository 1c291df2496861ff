import Foundation

/// When the generated records happened: uniformly within `startMs ..< startMs + spanMs`.
struct BenchTimes: Sendable {
    var startMs: Int64
    var spanMs: Int64

    /// The default: live traffic of the last ten minutes.
    static var lastTenMinutes: BenchTimes {
        BenchTimes(startMs: Int64(Date().timeIntervalSince1970 * 1000) - 600_000, spanMs: 600_000)
    }

    /// History: the `hours` whole hours that end where the current hour starts, so a stats
    /// window ending there reads whole hours only.
    static func hoursBeforeThisHour(_ hours: Int) -> BenchTimes {
        let hour: Int64 = 3_600_000
        let thisHour = Int64(Date().timeIntervalSince1970 * 1000) / hour * hour
        return BenchTimes(startMs: thisHour - Int64(max(hours, 1)) * hour, spanMs: Int64(max(hours, 1)) * hour)
    }

    /// Live history: the `hours` hours that end now, the current hour and minute included, so
    /// a stats window ending now has whole minutes and a partial one at its edges.
    static func hoursToNow(_ hours: Int) -> BenchTimes {
        let span = Int64(max(hours, 1)) * 3_600_000
        return BenchTimes(startMs: Int64(Date().timeIntervalSince1970 * 1000) - span, spanMs: span)
    }
}
