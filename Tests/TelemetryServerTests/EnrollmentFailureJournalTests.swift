import Foundation
import Logging
import Systemd
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// Failed enrollment calls reach the journal as one entry per environment, app, status code
/// and minute of arrival, with the count and a few example devices — never one per event —
/// carrying the code's MESSAGE_ID. Driven through the real ingest route in process, with
/// generated fleets: the property is checked on every entry of every run.
@Suite struct EnrollmentFailureJournalTests {
    struct Call {
        var app: String
        var device: String
        var code: Int?
        var succeeded: Bool?
        var env: String
        var minute: Int64
    }

    static let start: Int64 = 1_790_000_000_000 - 1_790_000_000_000 % 60_000

    @Test(arguments: 0..<4) func oneEntryPerAppCodeAndMinuteCountingEveryFailedCall(seed: UInt64) async throws {
        let clock = SettableClock(Self.start)
        let digest = EnrollmentFailureDigest(visible: { $0 })
        let hooks: @Sendable (DaemonComponents, Logger) -> ApplicationHooks = { _, _ in
            var hooks = ApplicationHooks()
            hooks.enrollmentFailures = digest
            return hooks
        }
        try await IngestHarness.run(clock: clock, hooks: hooks) { h in
            var random = SeededRandom(seed: 0xE17 + seed)
            var calls: [Call] = []
            let apps = (0..<3).map { "com.contoso.app\($0)" }
            let codes: [Int?] = [100, 101, 200, 200, 212, 225, 299, nil]
            for minute in 0..<3 {
                clock.set(Self.start + Int64(minute) * 60_000 + Int64(random.below(50_000)))
                for _ in 0..<(1 + random.below(4)) {
                    var lines: [String] = []
                    for _ in 0..<(1 + random.below(40)) {
                        let call = Call(
                            app: random.pick(apps), device: "dev-\(random.below(6))", code: random.pick(codes),
                            succeeded: random.pick([nil, nil, true, false]), env: random.below(5) == 0 ? "ppe" : "prod",
                            minute: Self.start + Int64(minute) * 60_000)
                        calls.append(call)
                        var data = #""operation":"enroll""#
                        if let c = call.code { data += #","statusCode":\#(c)"# }
                        if let s = call.succeeded { data += #","didSucceed":\#(s)"# }
                        let settings = call.env == "ppe" ? #","settings":{"MAMTelemetryUsePPE":true}"# : ""
                        lines.append(
                            #"{"name":"EnrollmentCall","appId":"\#(call.app)","deviceId":"\#(call.device)"\#(settings),"data":{\#(data)}}"#)
                        if random.below(3) == 0 {
                            lines.append(#"{"name":"AppLaunch","appId":"\#(call.app)","deviceId":"\#(call.device)"}"#)
                        }
                    }
                    let answer = try await h.post("/v1/telemetry", lines.joined(separator: "\n"))
                    #expect(answer.status == .ok, "\(answer.body)")
                }
            }
            // Nothing of the minute still running goes out: it may still grow.
            let early = digest.drain(before: Self.start + 2 * 60_000 + 59_999)
            #expect(early.allSatisfy { $0.value(of: "MAM_MINUTE") != Timestamp.format(milliseconds: Self.start + 120_000) })
            let entries = early + digest.drain(before: nil)
            #expect(digest.drain(before: nil).isEmpty, "drained twice")

            let failed = calls.filter { c in (c.succeeded ?? c.code.map(EnrollmentStatus.isSuccess)) == false }
            struct Key: Hashable {
                var env: String
                var app: String
                var code: String?
                var minute: String
            }
            var expected: [Key: (calls: Int, devices: Set<String>)] = [:]
            for c in failed {
                let key = Key(env: c.env, app: c.app, code: c.code.map(String.init), minute: Timestamp.format(milliseconds: c.minute))
                expected[key, default: (0, [])].calls += 1
                expected[key, default: (0, [])].devices.insert(c.device)
            }
            var seen = Set<Key>()
            for e in entries {
                let key = Key(
                    env: try #require(e.value(of: "MAM_ENV")), app: try #require(e.value(of: "MAM_APP_ID")),
                    code: e.value(of: "MAM_STATUS_CODE"),
                    minute: try #require(e.value(of: "MAM_MINUTE")))
                #expect(seen.insert(key).inserted, "two entries for \(key)")
                let want = try #require(expected[key], "an entry no failed call explains: \(key)")
                #expect(e.value(of: "MAM_FAILED_CALLS") == String(want.calls))
                let examples = e.values(of: "MAM_DEVICE_ID")
                #expect(examples.count == min(want.devices.count, EnrollmentFailureDigest.examplesPerEntry))
                #expect(Set(examples).count == examples.count && Set(examples).isSubset(of: want.devices))
                let code = key.code.flatMap(Int.init)
                #expect(e.value(of: "MESSAGE_ID") == EnrollmentFailureMessageID.id(for: code))
                #expect(e.value(of: "MAM_STATUS_NAME") == code.flatMap(EnrollmentStatus.name(of:)))
                #expect(e.value(of: "PRIORITY") == "4")
                #expect(e.value(of: "MESSAGE")?.contains("\(want.calls) failed enrollment call") == true, "\(e.value(of: "MESSAGE") ?? "")")
            }
            #expect(seen == Set(expected.keys), "missing: \(Set(expected.keys).subtracting(seen))")
        }
    }

    @Test func aFloodOfAppIdsCostsBoundedEntries() {
        let digest = EnrollmentFailureDigest(visible: { $0 })
        let keys = (0..<(EnrollmentFailureDigest.appsPerMinute + 300)).map { i in
            RecordKeys(time: 0, appId: "app-\(i)", deviceId: "d", name: EventName.enrollmentCall, statusCode: 200)
        }
        digest.add(keys, env: .prod, receivedAt: Self.start)
        let entries = digest.drain(before: nil)
        #expect(entries.count == EnrollmentFailureDigest.appsPerMinute + 1)
        let overflow = entries.filter { $0.value(of: "MAM_APP_ID") == nil }
        #expect(overflow.count == 1 && overflow.first?.value(of: "MAM_FAILED_CALLS") == "300")
    }

    /// Status codes are the client's too: made-up ones share one entry per app and minute,
    /// so a client cannot make the daemon write one journal entry per event.
    @Test(arguments: 0..<3) func aFloodOfUndocumentedCodesCostsOneEntryPerAppAndMinute(seed: UInt64) throws {
        var random = SeededRandom(seed: 0xC0DE + seed)
        let digest = EnrollmentFailureDigest(visible: { $0 })
        let documented = EnrollmentStatus.all.filter { !$0.succeeded }.map(\.code)
        var keys: [RecordKeys] = []
        var undocumented = Set<Int>()
        var documentedSeen = Set<Int>()
        for i in 0..<(2_000 + random.below(2_000)) {
            let code: Int
            if random.below(4) == 0 {
                code = random.pick(documented)
                documentedSeen.insert(code)
            } else {
                code = Int(truncatingIfNeeded: random.next())
                guard EnrollmentStatus.explanation(of: code) == nil else { continue }
                undocumented.insert(code)
            }
            keys.append(
                RecordKeys(
                    time: 0, appId: "com.contoso.app", deviceId: "dev-\(i % 9)", name: EventName.enrollmentCall, statusCode: code,
                    succeeded: false))
        }
        digest.add(keys, env: .prod, receivedAt: Self.start)
        let entries = digest.drain(before: nil)
        #expect(entries.count == documentedSeen.count + 1, "one entry per documented code and one for the others")
        #expect(entries.map { Int($0.value(of: "MAM_FAILED_CALLS") ?? "") ?? 0 }.reduce(0, +) == keys.count, "every call counted")
        let others = try #require(entries.first { $0.value(of: "MESSAGE_ID") == EnrollmentFailureMessageID.id(for: nil) })
        let examples = others.values(of: "MAM_STATUS_CODE").compactMap(Int.init)
        #expect(examples.count == EnrollmentFailureDigest.examplesPerEntry && Set(examples).isSubset(of: undocumented))
        #expect(others.value(of: "MAM_STATUS_NAME") == nil)
        #expect(others.value(of: "MESSAGE")?.contains("undocumented status codes") == true, "\(others.value(of: "MESSAGE") ?? "")")
        for e in entries where e.value(of: "MESSAGE_ID") != EnrollmentFailureMessageID.id(for: nil) {
            let code = try #require(e.value(of: "MAM_STATUS_CODE").flatMap(Int.init))
            #expect(documentedSeen.contains(code) && e.value(of: "MESSAGE_ID") == EnrollmentFailureMessageID.id(for: code))
        }
    }

    @Test func appAndDeviceIdsAppearAsAReaderWithoutPIISeesThem() {
        let digest = EnrollmentFailureDigest(visible: { $0.contains("@") ? "user-redacted" : $0 })
        digest.add(
            [RecordKeys(time: 0, appId: "com.contoso.app", deviceId: "jane@contoso.com", name: EventName.enrollmentCall, statusCode: 200)],
            env: .prod, receivedAt: Self.start)
        let entry = try? #require(digest.drain(before: nil).first)
        #expect(entry?.values(of: "MAM_DEVICE_ID") == ["user-redacted"])
        #expect(entry?.value(of: "MESSAGE")?.contains("jane") == false)
    }
}
