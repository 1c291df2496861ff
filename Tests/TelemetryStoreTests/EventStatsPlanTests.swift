import StoreCore
import TelemetryModel
import TestSupport
import Testing

/// How a stats window is split between hourly rollups, minute rollups and records: every
/// millisecond of the window exactly once, rollup periods wholly inside it, and records only
/// for the sub-minute ends and what lies before the kept minutes.
@Suite struct EventStatsPlanTests {
    static let minute = EventRollupScope.minuteMs
    static let hour = EventRollupScope.hourMs

    /// The window's parts in ascending order, each as an inclusive range.
    static func parts(_ plan: EventStatsPlan) -> [ClosedRange<Int64>] {
        var parts = plan.records
        if let h = plan.hours { parts.append(h.lowerBound...(h.upperBound - 1)) }
        for m in plan.minutes { parts.append(m.lowerBound...(m.upperBound - 1)) }
        return parts.sorted { $0.lowerBound < $1.lowerBound }
    }

    @Test func generatedWindowsAreCoveredOnceWithAtMostTwoPartialMinutesFromRecords() {
        var random = SeededRandom(seed: PropertyScale.seed(31))
        let now: Int64 = 1_795_000_000_000 + 12_345
        for n in 0..<PropertyScale.cases(20_000) {
            let minutesFrom = EventRollupScope.minute(of: now - Int64(random.below(60)) * Self.hour)
            var since = now - Int64(random.below(60 * 3_600_000))
            var until = since + Int64(random.pick([random.below(90_000), random.below(3 * 3_600_000), random.below(30 * 3_600_000)]))
            if random.below(4) == 0 { since = EventRollupScope.minute(of: since) }
            if random.below(4) == 0 { until = max(since, EventRollupScope.hour(of: until) - 1) }
            let grain: EventRollupGrain? = random.pick([.hour, .minute, nil])
            let plan = EventStatsPlan(since: since, until: until, grain: grain, minutesFrom: minutesFrom)
            let parts = Self.parts(plan)
            let context = "case \(n): \(since)...\(until) \(String(describing: grain)) from \(minutesFrom)"
            #expect(parts.first?.lowerBound == since && parts.last?.upperBound == until, "\(context)")
            for (a, b) in zip(parts, parts.dropFirst()) { #expect(a.upperBound + 1 == b.lowerBound, "\(context)") }
            if let h = plan.hours {
                #expect(grain == .hour && h.lowerBound % Self.hour == 0 && h.upperBound % Self.hour == 0, "\(context)")
            }
            for m in plan.minutes {
                #expect(grain != nil && m.lowerBound >= minutesFrom, "\(context)")
                #expect(m.lowerBound % Self.minute == 0 && m.upperBound % Self.minute == 0, "\(context)")
            }
            guard grain != nil else {
                #expect(plan.records == [since...until] && plan.minutes.isEmpty, "\(context)")
                continue
            }
            // From records: whatever lies before the kept minutes, plus at most a partial
            // minute at each end.
            let kept = plan.records.compactMap { r -> ClosedRange<Int64>? in
                r.upperBound < minutesFrom ? nil : max(r.lowerBound, minutesFrom)...r.upperBound
            }
            #expect(kept.count <= 2 && kept.reduce(0) { $0 + $1.upperBound - $1.lowerBound + 1 } < 2 * Self.minute, "\(context)")
            if since >= minutesFrom, until - since >= 2 * Self.minute {
                #expect(!plan.minutes.isEmpty || plan.hours != nil, "\(context)")
            }
        }
    }

    @Test func theEdgesOfAnExampleWindow() {
        // 10:00:30.5 to 13:59:59.999, minutes kept from 09:00: hours 11-13 from hourly rows,
        // 10:01-10:59 from minute rows, 10:00:30.5-10:00:59.999 from records.
        let day: Int64 = 1_795_003_200_000 - 1_795_003_200_000 % 86_400_000
        let h = { (n: Int64) in day + n * Self.hour }
        let plan = EventStatsPlan(since: h(10) + 30_500, until: h(14) - 1, grain: .hour, minutesFrom: h(9))
        #expect(plan.hours == h(11)..<h(14))
        #expect(plan.minutes == [(h(10) + Self.minute)..<h(11)])
        #expect(plan.records == [(h(10) + 30_500)...(h(10) + Self.minute - 1)])
        // Minutes before the horizon come from records, whole or not.
        let old = EventStatsPlan(since: h(8) + 5, until: h(9) + 90_000, grain: .minute, minutesFrom: h(9))
        #expect(old.minutes == [h(9)..<(h(9) + Self.minute)])
        #expect(old.records == [(h(8) + 5)...(h(9) - 1), (h(9) + Self.minute)...(h(9) + 90_000)])
    }
}
