import Foundation
import TelemetryModel
import Testing

@Suite struct WireDecodingTests {
    let decoder = TelemetryEventDecoder()

    @Test func ndjsonKeepsValidLinesAndNamesInvalidOnes() throws {
        let body = Array(
            """
            {"name":"AppLaunch","appId":"a","data":{"managementType":"MDM"}}

            {"name":"EnrollmentCall","appId":"a","data":{"statusCode":"x"}}
            {"appId":"a"}
            {"name":"Custom","appId":"a","id":5}
            [1,2]
            {"name":"EnrollmentCall","appId":"a","time":"2026-11-21T10:00:00.5+01:00","data":{"operation":"enroll","statusCode":203,"durationMs":10}}
            """.utf8)
        let (records, rejected) = try decoder.decode(body: body, receivedAt: 42)
        #expect(records.count == 2)
        #expect(records[0].keys.detail == "MDM")
        #expect(records[0].keys.time == 42)
        #expect(records[1].keys.statusCode == 203)
        #expect(records[1].keys.succeeded == false)
        #expect(records[1].keys.time == Timestamp.parse("2026-11-21T09:00:00.500Z"))
        #expect(rejected.map(\.line) == [3, 4, 5, 6])
        #expect(rejected[0].error.hasPrefix("data.statusCode: expected an integer"))
        #expect(rejected[1].error == "name is required")
        #expect(rejected[2].error.contains("reserved"))
        #expect(rejected[3].error == "not a JSON object")
    }

    @Test func jsonArrayElementsArePositionedAndCompacted() throws {
        let body = Array(
            """
            [
              {"name": "AppLaunch",
               "appId": "a b"},
              {"name": 3, "appId": "a"}
            ]
            """.utf8)
        let (records, rejected) = try decoder.decode(body: body, receivedAt: 0)
        #expect(records.count == 1)
        #expect(String(decoding: records[0].json, as: UTF8.self) == #"{"name":"AppLaunch","appId":"a b"}"#)
        #expect(rejected == [LineError(line: 2, error: "name: expected a string")])
    }

    @Test func limitsAreNamedWithTheirValue() throws {
        let limits = DecodeLimits(maxLineBytes: 100, maxRecordsPerRequest: 2, maxDepth: 3, maxFields: 8, maxStringBytes: 10)
        let d = TelemetryEventDecoder(limits: limits)
        let deep = #"{"name":"x","appId":"a","data":{"a":{"b":{}}}}"#
        let long = #"{"name":"xxxxxxxxxxxxxxxx","appId":"a"}"#
        let (_, rejected) = try d.decode(body: Array((deep + "\n" + long).utf8), receivedAt: 0)
        #expect(rejected[0].error.contains("maxDepth=3"))
        #expect(rejected[1].error.contains("maxStringBytes=10"))
        let wide = #"{"name":"x","appId":"a","b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7}"#
        #expect(try d.decode(body: Array(wide.utf8), receivedAt: 0).rejected.first?.error.contains("maxFields=8") == true)
        #expect(throws: RequestLimitError.self) {
            try d.decode(body: Array("{}\n{}\n{}\n".utf8), receivedAt: 0)
        }
    }

    @Test func timestampsRoundTrip() {
        let ms = Timestamp.parse("2026-11-21T10:15:30.123Z")!
        #expect(Timestamp.format(milliseconds: ms) == "2026-11-21T10:15:30.123Z")
        #expect(Timestamp.parse("1970-01-01T00:00:00Z") == 0)
        #expect(Timestamp.parse("2026-11-21 10:15:30") == Timestamp.parse("2026-11-21T10:15:30Z"))
        #expect(Timestamp.parse("2026-13-01T00:00:00Z") == nil)
        let twoHoursBefore: Int64? = 2_800_000
        #expect(TimeExpression.parse("-2h", now: 10_000_000) == twoHoursBefore)
        let weekBefore: Int64? = -604_800_000
        #expect(TimeExpression.parse("-7d", now: 0) == weekBefore)
    }

    @Test func incidentIDsAreReadableAndParse() {
        var seen = Set<String>()
        for _ in 0..<2000 {
            let id = IncidentID.random()
            #expect(id.value.count == 13)
            #expect(!id.value.dropFirst(4).contains { "01OILU".contains($0) })
            #expect(IncidentID(parsing: id.value.lowercased().replacingOccurrences(of: "-", with: "")) == id)
            seen.insert(id.value)
        }
        #expect(seen.count == 2000)
        #expect(IncidentID(parsing: "MAM-0000-1111") == nil)
    }
}
