import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import TelemetryModel
import TelemetryStore
import Testing

@testable import TelemetryServer

/// The crashes the second audit reproduced with one request of an ingest token: each value
/// is now refused at ingest for its line, naming the field, and the daemon keeps answering
/// (before the fix each of these trapped the process).
@Suite(.serialized) struct HostileNumberTests {
    static let app = "com.contoso.app"

    /// After each attack the daemon must still answer, and the device's bundle must be whole.
    static func stillServes(_ h: IngestHarness, device: String) async throws {
        let reader = EveryReader(h: h, token: h.adminToken, piiAllowed: true)
        _ = try await reader.json("/v1/events?device=\(device)")
        _ = try await reader.bundle("/v1/bundles?device=\(device)&format=zip", format: "zip")
    }

    @Test func statusCodeOfInt64MinIsRefusedAsNumberAndAsString() async throws {
        try await IngestHarness.run { h in
            let token = try await h.ingestToken(boundTo: [Self.app])
            for spelling in ["-9223372036854775808", #""-9223372036854775808""#] {
                let line =
                    #"{"name":"EnrollmentCall","appId":"\#(Self.app)","deviceId":"d1","data":{"operation":"enroll","statusCode":\#(spelling)}}"#
                let ok = #"{"name":"EnrollmentCall","appId":"\#(Self.app)","deviceId":"d1","data":{"operation":"enroll","statusCode":100}}"#
                let answer = try await h.post("/v1/telemetry", line + "\n" + ok, token: token)
                #expect(answer.status == .ok, "\(answer.body)")
                #expect(answer.accepted == 1)
                let rejected = answer.json["rejected"] as? [[String: Any]] ?? []
                #expect(rejected.first?["line"] as? Int == 1)
                #expect(
                    (rejected.first?["error"] as? String)?.hasPrefix(
                        "data.statusCode: -9223372036854775808 is outside the accepted range -2147483648...2147483647") == true,
                    "\(answer.body)")
                // As the only line: the whole body is refused, with the reason.
                let alone = try await h.post("/v1/telemetry", line, token: token)
                #expect(alone.status == .badRequest && alone.body.contains("data.statusCode"), "\(alone.body)")
            }
            try await Self.stillServes(h, device: "d1")
        }
    }

    @Test func otlpJSONIntValueOfInt64MinIsRefused() async throws {
        try await IngestHarness.run { h in
            let token = try await h.ingestToken(boundTo: [Self.app])
            let body = #"""
                {"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"com.contoso.app"}},
                  {"key":"device.id","value":{"stringValue":"d2"}}]},
                  "scopeLogs":[{"logRecords":[
                    {"eventName":"EnrollmentCall","attributes":[{"key":"operation","value":{"stringValue":"enroll"}},
                      {"key":"statusCode","value":{"intValue":"-9223372036854775808"}}]},
                    {"eventName":"EnrollmentCall","attributes":[{"key":"statusCode","value":{"intValue":"100"}}]}]}]}]}
                """#
            let answer = try await h.post("/v1/logs", body, token: token, contentType: "application/json")
            #expect(answer.status == .ok, "\(answer.body)")
            let partial = answer.json["partialSuccess"] as? [String: Any]
            #expect((partial?["rejectedLogRecords"] as? String) == "1" || (partial?["rejectedLogRecords"] as? Int) == 1, "\(answer.body)")
            #expect(
                (partial?["errorMessage"] as? String)?.contains("data.statusCode: -9223372036854775808 is outside") == true,
                "\(answer.body)")
            try await Self.stillServes(h, device: "d2")
        }
    }

    @Test func durationsPastSevenDaysOrADoubleAreRefusedAndBundlesStayWhole() async throws {
        try await IngestHarness.run { h in
            let token = try await h.ingestToken(boundTo: [Self.app])
            let lines = ["1e19", "1e400", "-1", #""Infinity""#, "90"].map {
                #"{"name":"EnrollmentCall","appId":"\#(Self.app)","deviceId":"d3","data":{"operation":"enroll","statusCode":100,"durationMs":\#($0)}}"#
            }
            let answer = try await h.post("/v1/telemetry", lines.joined(separator: "\n"), token: token)
            #expect(answer.status == .ok, "\(answer.body)")
            #expect(answer.accepted == 1)
            let errors = (answer.json["rejected"] as? [[String: Any]] ?? []).compactMap { $0["error"] as? String }
            #expect(errors.count == 4 && errors.allSatisfy { $0.hasPrefix("data.durationMs: ") }, "\(errors)")
            #expect(errors.first?.contains("1e19 is outside the accepted range 0...604800000") == true)
            #expect(errors.dropFirst().first?.contains("the number 1e400 is outside the range of a double") == true)
            let reader = EveryReader(h: h, token: h.adminToken, piiAllowed: true)
            let bundle = try await reader.bundle("/v1/bundles?device=d3&format=zip", format: "zip")
            #expect(bundle["timeline.txt"]?.contains("90 ms") == true, "\(bundle["timeline.txt"] ?? "")")
        }
    }
}
