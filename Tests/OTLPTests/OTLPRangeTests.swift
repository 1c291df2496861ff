import Foundation
import OTLP
import TelemetryModel
import Testing

/// The OTLP numbers the mapping interprets (severity, times) and the attributes it turns into
/// `statusCode` and `durationMs` have declared ranges (`InterpretedField`): a record outside
/// them is refused alone, naming the field; numbers it only keeps are kept as they came.
@Suite struct OTLPRangeTests {
    let decoder = OTLPLogsDecoder()

    func refusals(_ records: [PBLogRecord]) throws -> (OTLPBatch, [String]) {
        let batch = try decoder.decode(
            try request(resourceLogs(mailResource, [("", records)])).protobuf, encoding: .protobuf, receivedAt: 7)
        return (batch, batch.rejected.map(\.error))
    }

    @Test func severityAndTimesOutsideTheirRangesAreRefused() throws {
        let (batch, errors) = try refusals([
            logRecord(body: .string("a"), severity: 30, severityText: "ERROR"),
            logRecord(body: .string("b"), severity: -1),
            logRecord(body: .string("c"), timeNanos: UInt64.max),
            logRecord(body: .string("d"), observedNanos: UInt64(Int64.max) + 1),
            logRecord(body: .string("e"), severity: 24, timeNanos: UInt64(Int64.max)),
        ])
        #expect(errors[0] == "severityNumber: 30 is outside the accepted range 0...24 (an OpenTelemetry severity number (0 unset, 1-24))")
        #expect(errors[1].hasPrefix("severityNumber: -1 is outside"))
        #expect(errors[2].hasPrefix("timeUnixNano: 18446744073709551615 is outside the accepted range 0...9223372036854775807"))
        #expect(errors[3].hasPrefix("observedTimeUnixNano: 9223372036854775808 is outside"))
        #expect(batch.rejected.map(\.line) == [1, 2, 3, 4])
        #expect(batch.logs.map(\.keys.time) == [9_223_372_036_854])
    }

    @Test func interpretedAttributesOutsideTheirRangesAreRefused() throws {
        func call(_ attributes: [(String, Attr)]) -> PBLogRecord { logRecord(eventName: "EnrollmentCall", attributes: attributes) }
        let (batch, errors) = try refusals([
            call([("statusCode", .int(Int64.min))]),
            call([("statusCode", .int(Int64.max))]),
            call([("statusCode", .double(2e9 * 2))]),
            call([("durationMs", .double(.nan))]),
            call([("durationMs", .double(.infinity))]),
            call([("durationMs", .double(1e19))]),
            call([("durationMs", .int(-1))]),
            call([("statusCode", .string("NaN"))]),
            call([("statusCode", .int(203)), ("durationMs", .double(812.5)), ("other", .int(Int64.min)), ("ratio", .double(.infinity))]),
        ])
        #expect(batch.rejected.map(\.line) == Array(1...8))
        for (k, error) in errors.enumerated() {
            #expect(error.hasPrefix(k < 3 || k == 7 ? "data.statusCode: " : "data.durationMs: "), "\(error)")
        }
        #expect(errors[0].hasPrefix("data.statusCode: -9223372036854775808 is outside the accepted range -2147483648...2147483647"))
        // Numbers the daemon does not interpret are kept: an int as sent, a non-finite double as text.
        let kept = try #require(batch.events.first)
        #expect(kept.keys.statusCode == 203 && kept.keys.durationMs == 812.5)
        #expect(String(decoding: kept.json, as: UTF8.self).contains(#""other":-9223372036854775808,"ratio":"inf""#))
    }

    /// The reproduced crash: OTLP JSON writes 64-bit integers as strings.
    @Test func otlpJSONIntValueOfInt64MinIsRefusedAsAStatusCode() throws {
        let body = #"""
            {"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"com.contoso.app"}}]},
              "scopeLogs":[{"logRecords":[
                {"eventName":"EnrollmentCall","attributes":[{"key":"operation","value":{"stringValue":"enroll"}},
                  {"key":"statusCode","value":{"intValue":"-9223372036854775808"}}]},
                {"eventName":"EnrollmentCall","attributes":[{"key":"statusCode","value":{"doubleValue":"NaN"}}]},
                {"eventName":"EnrollmentCall","attributes":[{"key":"durationMs","value":{"doubleValue":"Infinity"}}]},
                {"eventName":"EnrollmentCall","attributes":[{"key":"statusCode","value":{"intValue":"100"}},
                  {"key":"statusCode","value":{"intValue":"200"}}]}]}]}]}
            """#
        let batch = try decoder.decode(Array(body.utf8), encoding: .json, receivedAt: 7)
        #expect(batch.events.isEmpty)
        #expect(batch.rejected.map(\.line) == [1, 2, 3, 4])
        #expect(batch.rejected[0].error.hasPrefix("data.statusCode: -9223372036854775808 is outside"))
        #expect(batch.rejected[1].error.hasPrefix("data.statusCode: expected an integer"))
        #expect(batch.rejected[2].error.hasPrefix("data.durationMs: "))
        #expect(batch.rejected[3].error.hasPrefix("duplicate member data.statusCode"))
    }
}
