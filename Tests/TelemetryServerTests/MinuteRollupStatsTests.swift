import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// Stats over windows with any edges — sub-minute, crossing hours, the current hour and
/// minute, older than the kept minutes — answered from hourly and minute rollups are byte for
/// byte the answers computed from every record (`source=records`), while events keep arriving
/// out of order (late, in the current minute, a little ahead of the clock) and retention
/// passes move the kept minutes on between rounds.
@Suite(.serialized) struct MinuteRollupStatsTests {
    static let start: Int64 = Timestamp.parse("2026-11-21T10:17:23.456Z")!
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000

    /// One round of events around `now`: most over the last 30 hours, some in the current
    /// minute, some a few seconds ahead, some older than the kept minutes, a few retries of
    /// the previous round's ids; in no particular time order. A third lie next to a minute's
    /// edge; their times are added to `edges`.
    static func body(round: Int, now: Int64, count: Int, edges: inout [String: [Int64]], random: inout SeededRandom) -> [UInt8] {
        var lines: [String] = []
        for i in 0..<count {
            let offset: Int64 =
                switch random.below(10) {
                case 0: Int64(random.below(Int(now - EventRollupScope.minute(of: now)) + 1))
                case 1: -Int64(random.below(20_000))
                case 2: Int64(random.below(50 * 3_600_000))
                default: Int64(random.below(30 * 3_600_000))
                }
            let name = random.pick(StatsRollupTests.names)
            var ms = now - offset
            if random.below(3) == 0 {
                ms = EventRollupScope.minute(of: ms) + random.pick([-1, 0, 1, minute - 1])
                edges[name, default: []].append(ms)
            }
            let id = round > 0 && random.below(30) == 0 ? "r\(round - 1)-\(i)" : "r\(round)-\(i)"
            lines.append(StatsRollupTests.line(name: name, id: id, device: "d\(i % 40)", time: ms, random: &random))
        }
        return Array(lines.joined(separator: "\n").utf8)
    }

    /// A window of one of the shapes dashboards and support engineers ask for, at `now`; most
    /// of them with one end a millisecond or two from an event at a minute's edge (`edges`),
    /// where a minute taken one off would count that event on the wrong side of the window.
    static func window(now: Int64, edges: [Int64], random: inout SeededRandom) -> (since: Int64, until: Int64) {
        var (since, until) = shape(now: now, random: &random)
        guard !edges.isEmpty, random.below(4) > 0 else { return (since, until) }
        let edge = random.pick(edges)
        if random.below(2) == 0 {
            since = edge + random.pick([-1, 0, 1, 2])
            until = max(since, until)
        } else {
            until = edge + random.pick([-2, -1, 0, 1])
            since = min(since, until)
        }
        return (since, until)
    }

    static func shape(now: Int64, random: inout SeededRandom) -> (since: Int64, until: Int64) {
        let currentHour = EventRollupScope.hour(of: now)
        switch random.below(8) {
        case 0: return (now - hour, now)
        case 1: return (now - 24 * hour, now)
        case 2: return (currentHour, now)
        case 3:
            let since = currentHour - Int64(1 + random.below(40)) * hour
            return (since, since + hour - 1)
        case 4:
            let since = now - Int64(random.below(30 * 3_600_000))
            return (since, since + Int64(random.below(Int(minute))))
        case 5:
            // Minute edges on both sides, crossing hours.
            let since = EventRollupScope.minute(of: now - Int64(random.below(50 * 3_600_000)))
            return (since, since + Int64(1 + random.below(30 * 60)) * minute - 1)
        default:
            let since = now - Int64(random.below(55 * 3_600_000))
            return (since, min(now + 30_000, since + Int64(random.below(random.pick([90_000, 3 * 3_600_000, 30 * 3_600_000])))))
        }
    }

    @Test func anyWindowAnswersAsReadingEveryRecord() async throws {
        let clock = ManualClock(wallMilliseconds: Self.start)
        try await StatsTests.withApp(clock: clock) { client, components in
            var random = SeededRandom(seed: PropertyScale.seed(25))
            var compared = 0
            var edges: [String: [Int64]] = [:]
            for round in 0..<4 {
                let body = Self.body(round: round, now: clock.nowMilliseconds(), count: 700, edges: &edges, random: &random)
                try await StatsRollupTests.post(client, body)
                for _ in 0..<PropertyScale.cases(40) {
                    let now = clock.nowMilliseconds()
                    let name = random.pick(StatsRollupTests.names + [EventName.enrollmentCall])
                    let what = [EventName.enrollmentCall: "enrollment", EventName.appLaunch: "launches"][name] ?? "actions"
                    let (since, until) = Self.window(now: now, edges: edges[name] ?? [], random: &random)
                    let interval = random.pick(["1m", "5m", "15m", "1h", "1h", "2h", "1d", "90s", "7m"])
                    let app = random.pick(["", "&app=com.contoso.b"])
                    let uri = "/v1/stats/\(what)?since=\(since)&until=\(until)&interval=\(interval)\(app)"
                    let fromRollups = try await StatsRollupTests.text(client, uri)
                    let fromRecords = try await StatsRollupTests.text(client, uri + "&source=records")
                    #expect(fromRollups == fromRecords, "round \(round), now \(now): \(uri)")
                    compared += 1
                }
                // Time moves on, by minutes or by most of a day, and retention runs: the kept
                // minutes move with it.
                clock.advance(.milliseconds(random.pick([random.below(20 * 60_000), random.below(20 * 3_600_000)])))
                _ = try await components.retention.sweep()
            }
            #expect(compared == 4 * PropertyScale.cases(40))
        }
    }
}
