import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// Stats answered from the hourly rollups are byte for byte the answers computed from every
/// record (`source=records`), for any window, interval and app; and a rebuild of the rollups
/// from the records changes no answer.
@Suite(.serialized) struct StatsRollupTests {
    static let base: Int64 = Timestamp.parse("2026-11-21T00:00:00.000Z")!

    /// Enrollment calls, launches and actions over 30 hours, some without status, outcome or
    /// duration, with whole and fractional durations.
    static func body(_ count: Int, random: inout SeededRandom) -> [UInt8] {
        let lines = (0..<count).map { i in
            let time = base + Int64(random.below(30 * 3_600_000))
            return line(name: random.pick(names), id: "r\(i)", device: "d\(i % 40)", time: time, random: &random)
        }
        return Array(lines.joined(separator: "\n").utf8)
    }

    static let names = [EventName.enrollmentCall, EventName.appLaunch, EventName.intuneAction]

    /// One event named `name` of a random app, operation, status code, outcome and duration.
    static func line(name: String, id: String, device: String, time: Int64, random: inout SeededRandom) -> String {
        let app = random.pick(["com.contoso.a", "com.contoso.b", "com.contoso.c"])
        let head = #""appId":"\#(app)","deviceId":"\#(device)","eventId":"\#(id)","time":"\#(Timestamp.format(milliseconds: time))""#
        switch name {
        case EventName.enrollmentCall:
            var data = #""operation":"\#(random.pick(["enroll", "policyCheckIn", "unenroll"]))""#
            if random.below(8) > 0 { data += #","statusCode":\#(random.pick([100, 101, 102, 200, 203, 212, 216, 999]))"# }
            if random.below(3) == 0 { data += #","didSucceed":\#(random.below(2) == 0)"# }
            if random.below(6) > 0 {
                data += #","durationMs":\#(random.below(2) == 0 ? "\(random.below(4000))" : "\(Double(random.below(400_000)) / 8)")"#
            }
            return #"{"name":"EnrollmentCall",\#(head),"data":{\#(data)}}"#
        case EventName.appLaunch:
            return #"{"name":"AppLaunch",\#(head),"data":{"managementType":"\#(random.pick(["MDM", "MAM-WE", "Unmanaged"]))"}}"#
        default:
            return #"{"name":"IntuneAction",\#(head),"data":{"action":"\#(random.pick(["SelectiveWipe", "PinPrompt"]))"}}"#
        }
    }

    static func post(_ client: any TestClientProtocol, _ body: [UInt8]) async throws {
        try await client.execute(
            uri: "/v1/telemetry", method: .post, headers: [.contentType: "application/x-ndjson"], body: ByteBuffer(bytes: body)
        ) { r in
            #expect(r.status == .ok, "\(String(buffer: r.body))")
        }
    }

    static func text(_ client: any TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get) async throws -> String {
        try await client.execute(uri: uri, method: method) { r in
            #expect(r.status == .ok, "\(uri): \(String(buffer: r.body))")
            return String(buffer: r.body)
        }
    }

    @Test func randomWindowsAnswerAsReadingEveryRecord() async throws {
        try await StatsTests.withApp { client in
            var random = SeededRandom(seed: 42)
            for _ in 0..<3 { try await Self.post(client, Self.body(700, random: &random)) }
            for n in 0..<40 {
                var since = Self.base - 3_600_000 + Int64(random.below(32 * 3_600_000))
                var until = since + Int64(random.below(26 * 3_600_000))
                if random.below(3) == 0 { since -= since % 3_600_000 }
                if random.below(3) == 0 { until -= until % 3_600_000 + 1 }
                let interval = random.pick(["1h", "1h", "2h", "1d", "15m", "90m"])
                let app = random.pick(["", "&app=com.contoso.b"])
                let what = random.pick(["enrollment", "launches", "actions"])
                let uri = "/v1/stats/\(what)?since=\(since)&until=\(until)&interval=\(interval)\(app)"
                let fromRollups = try await Self.text(client, uri)
                let fromRecords = try await Self.text(client, uri + "&source=records")
                #expect(fromRollups == fromRecords, "window \(n): \(uri)")
                #expect(fromRollups.contains("\"count\"") || what != "enrollment")
            }
        }
    }

    @Test func aRebuildChangesNoAnswer() async throws {
        try await StatsTests.withApp { client in
            var random = SeededRandom(seed: 9)
            let body = Self.body(900, random: &random)
            try await Self.post(client, body)
            let uri = "/v1/stats/enrollment?since=\(Self.base)&until=\(Self.base + 30 * 3_600_000 - 1)&interval=1h"
            let before = try await Self.text(client, uri)
            let answer = try await Self.text(client, "/v1/stats/rollups/rebuild", method: .post)
            let rebuilt = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: [String: [String: Int]]]
            #expect(rebuilt?["rebuilt"]?["prod"]?["records"] == 900, "every posted event is rolled up: \(answer)")
            #expect(rebuilt?["rebuilt"]?["ppe"]?["records"] == 0)
            #expect(try await Self.text(client, uri) == before)
            try await client.execute(uri: "/v1/stats/rollups/rebuild?env=staging", method: .post) { r in
                #expect(r.status == .badRequest)
                #expect(String(buffer: r.body).contains("env"))
            }
        }
    }
}
