import Foundation
import TelemetryModel
import TelemetryStore
import TestSupport
import Testing

@testable import TelemetryServer

/// The support lead's data (issue 24): `GET /v1/stats/apps` over generated fleets, every
/// figure checked against a count of the generated calls — volume beside every rate, the
/// previous period of the same length, distinct devices and users per status code, the
/// registry's apps included — and the partial bucket marked in `/v1/stats/*` answers.
@Suite struct FleetStatsTests {
    static let now = Timestamp.parse("2026-11-26T12:30:00Z")!
    static let hour: Int64 = 3_600_000

    struct Call {
        var app: String
        var device: String
        var user: String
        var code: Int?
        var didSucceed: Bool?
        var time: Int64
    }

    /// Equal, up to the last bits a JSON round trip may change.
    static func same(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): abs(a - b) < 1e-12
        default: false
        }
    }

    @Test(arguments: 0..<3) func theAppTableCountsWhatWasSent(seed: UInt64) async throws {
        let clock = SettableClock(Self.now)
        try await IngestHarness.run(clock: clock) { h in
            var random = SeededRandom(seed: 0xF1EE7 + seed)
            _ = try await h.components.registry.register(
                appId: "com.contoso.registered", flags: AppFlags(verboseLogging: true), source: "api", now: 0)
            var calls: [Call] = []
            var launches: [(app: String, time: Int64)] = []
            var lines: [String] = []
            for _ in 0..<(150 + random.below(100)) {
                // Both periods: the last 24 h and the 24 h before (and a little outside both).
                let time = Self.now - Int64(random.below(50 * 60)) * 60_000
                let app = random.pick(["com.contoso.mail", "com.contoso.files", "com.contoso.tiny"])
                if random.below(4) == 0 {
                    launches.append((app, time))
                    lines.append(
                        #"{"name":"AppLaunch","appId":"\#(app)","deviceId":"d","time":"\#(Timestamp.format(milliseconds: time))"}"#)
                    continue
                }
                let call = Call(
                    app: app, device: "dev-\(random.below(8))",
                    user: random.pick(["", "u1@contoso.com", "U2@contoso.com", "u3@contoso.com"]),
                    code: random.pick([100, 101, 200, 200, 225, 212, 299, nil]), didSucceed: random.pick([nil, nil, nil, true, false]),
                    time: time)
                calls.append(call)
                var data = #""operation":"enroll""#
                if let c = call.code { data += #","statusCode":\#(c)"# }
                if let s = call.didSucceed { data += #","didSucceed":\#(s)"# }
                let identity = call.user.isEmpty ? "" : #","identity":"\#(call.user)""#
                lines.append(
                    #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"\#(call.device)"\#(identity),"time":"\#(Timestamp.format(milliseconds: time))","data":{\#(data)}}"#
                )
            }
            #expect(try await h.post("/v1/telemetry", lines.joined(separator: "\n")).status == .ok)

            let answer = try await h.get("/v1/stats/apps?since=-24h")
            let since = Self.now - 24 * Self.hour
            #expect((answer["window"] as? [String: Any])?["since"] as? String == Timestamp.format(milliseconds: since))
            #expect((answer["previousWindow"] as? [String: Any])?["until"] as? String == Timestamp.format(milliseconds: since - 1))
            let rows = try #require(answer["apps"] as? [[String: Any]])
            let byApp = Dictionary(uniqueKeysWithValues: rows.map { ($0["appId"] as! String, $0) })
            #expect(Set(byApp.keys) == ["com.contoso.mail", "com.contoso.files", "com.contoso.tiny", "com.contoso.registered"])
            #expect(byApp["com.contoso.registered"]?["registered"] as? Bool == true)
            #expect((byApp["com.contoso.registered"]?["enrollment"] as? [String: Any])?["calls"] as? Int == 0)

            func failed(_ c: Call) -> Bool? { c.didSucceed.map { !$0 } ?? c.code.map { !EnrollmentStatus.isSuccess($0) } }
            let inNow = { (t: Int64) in t >= since && t <= Self.now }
            let inBefore = { (t: Int64) in t >= since - 24 * Self.hour && t < since }
            for app in ["com.contoso.mail", "com.contoso.files", "com.contoso.tiny"] {
                let row = try #require(byApp[app])
                let e = try #require(row["enrollment"] as? [String: Any])
                let now = calls.filter { $0.app == app && inNow($0.time) }
                let before = calls.filter { $0.app == app && inBefore($0.time) }
                let nowFailed = now.filter { failed($0) == true }
                let nowOK = now.filter { failed($0) == false }
                #expect(e["calls"] as? Int == now.count && e["failed"] as? Int == nowFailed.count && e["succeeded"] as? Int == nowOK.count)
                let rate = nowFailed.count + nowOK.count > 0 ? Double(nowFailed.count) / Double(nowFailed.count + nowOK.count) : nil
                #expect(Self.same(e["failureRate"] as? Double, rate))
                #expect(e["devicesFailing"] as? Int == Set(nowFailed.map(\.device)).count)
                #expect(e["usersFailing"] as? Int == Set(nowFailed.compactMap { $0.user.isEmpty ? nil : $0.user.lowercased() }).count)
                let previous = try #require(e["previous"] as? [String: Any])
                #expect(
                    previous["calls"] as? Int == before.count && previous["failed"] as? Int == before.filter { failed($0) == true }.count)
                let change = try #require(e["change"] as? [String: Any])
                #expect(
                    Self.same(change["calls"] as? Double, before.isEmpty ? nil : Double(now.count - before.count) / Double(before.count)))
                for code in e["statusCodes"] as? [[String: Any]] ?? [] {
                    let c = code["statusCode"] as? Int
                    let these = now.filter { $0.code == c }
                    #expect(code["calls"] as? Int == these.count, "\(app) \(String(describing: c))")
                    #expect(code["devices"] as? Int == Set(these.map(\.device)).count)
                    #expect(code["users"] as? Int == Set(these.compactMap { $0.user.isEmpty ? nil : $0.user.lowercased() }).count)
                    #expect(code["previousCalls"] as? Int == before.filter { $0.code == c }.count)
                    #expect(code["name"] as? String == c.flatMap(EnrollmentStatus.name(of:)))
                }
                #expect((e["statusCodes"] as? [Any])?.count == Set(now.map(\.code) + before.map(\.code)).count)
                let l = try #require(row["launches"] as? [String: Any])
                #expect(l["count"] as? Int == launches.filter { $0.app == app && inNow($0.time) }.count)
                #expect(l["previous"] as? Int == launches.filter { $0.app == app && inBefore($0.time) }.count)
            }
            let one = try await h.get("/v1/stats/apps?since=-24h&app=com.contoso.tiny")
            #expect((one["apps"] as? [[String: Any]])?.compactMap { $0["appId"] as? String } == ["com.contoso.tiny"])
        }
    }

    @Test func thePartialBucketIsMarked() async throws {
        let clock = SettableClock(Self.now)
        try await IngestHarness.run(clock: clock) { h in
            var lines: [String] = []
            for i in 0..<4 {
                let time = Timestamp.format(milliseconds: Self.now - Int64(i) * Self.hour)
                lines += [
                    #"{"name":"EnrollmentCall","eventId":"e\#(i)","appId":"com.a","deviceId":"d","time":"\#(time)","data":{"operation":"enroll","statusCode":100}}"#,
                    #"{"name":"AppLaunch","eventId":"l\#(i)","appId":"com.a","deviceId":"d","time":"\#(time)","data":{"managementType":"MAM-WE"}}"#,
                    #"{"name":"IntuneAction","eventId":"a\#(i)","appId":"com.a","deviceId":"d","time":"\#(time)","data":{"action":"PinPrompt"}}"#,
                ]
            }
            #expect(try await h.post("/v1/telemetry", lines.joined(separator: "\n")).status == .ok)
            // Sent again: duplicates, counted by the drop ledger in the hour they arrived.
            #expect(try await h.post("/v1/telemetry", lines.joined(separator: "\n")).status == .ok)
            for what in ["enrollment", "launches", "actions", "drops"] {
                let answer = try await h.get("/v1/stats/\(what)?since=-3h&interval=1h")
                let buckets = try #require(answer["buckets"] as? [[String: Any]])
                #expect(!buckets.isEmpty, "\(what): \(answer)")
                for b in buckets {
                    let start = try #require((b["start"] as? String).flatMap(Timestamp.parse))
                    // 09:30 to 12:30: the 09:00 and 12:00 buckets are cut by the window.
                    #expect(
                        b["partial"] as? Bool == (start == Self.now - 3 * Self.hour - 30 * 60_000 || start == Self.now - 30 * 60_000),
                        "\(what): \(b)")
                }
                if what != "drops" { #expect(buckets.count == 4, "\(what): \(answer)") }
            }
        }
    }
}
