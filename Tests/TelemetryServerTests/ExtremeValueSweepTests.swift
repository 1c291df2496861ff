import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import OTLP
import SwiftProtobuf
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// Extreme values (Int64's ends, 2^63, 2^64, ±1e308, 1e400, -0, 5e-324, NaN and Infinity as
/// text, huge exponents, 400-digit numbers, impossible times) swept at random through every
/// number the daemon interprets, on every ingest route (NDJSON, JSON array, log records, a
/// diagnostic upload's records, OTLP JSON and protobuf), then everything read back through
/// every reader. Asserted: no crash; every answer parses; every refusal names a field that
/// held an extreme value; a record whose values were all ordinary is accepted; every accepted
/// record, and nothing else, is in every reader's answer.
@Suite(.serialized) struct ExtremeValueSweepTests {
    typealias LogRecord = Opentelemetry_Proto_Logs_V1_LogRecord
    typealias AnyValue = Opentelemetry_Proto_Common_V1_AnyValue
    typealias KeyValue = Opentelemetry_Proto_Common_V1_KeyValue
    typealias ExportRequest = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest
    typealias ExportResponse = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceResponse

    static let app = "com.contoso.sweep"
    static let device = "sweep-dev"

    /// JSON spellings of values past some field's range or type.
    static let extremes = [
        "-9223372036854775808", "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e308", "-1e308", "1e400",
        "-1e400", "-0", "5e-324", #""NaN""#, #""Infinity""#, #""-Infinity""#, "1e999999999", "-1e999999999",
        String(repeating: "9", count: 400),
        "0." + String(repeating: "0", count: 400) + "1", #""-9223372036854775808""#, "2147483648", "-2147483649", "604800001", "-1",
        "1.5", "true", #""""#,
    ]
    static let extremeTimes = [
        #""2026-02-31T10:00:00Z""#, #""2026-01-01T24:00:00Z""#, #""2026-01-01T10:60:00Z""#, #""2026-01-01T10:00:00+99:00""#,
        #""0000-12-31T23:59:59Z""#, #""0001-01-01T00:00:00Z""#, #""9999-12-31T23:59:59.999Z""#, "253402300800000", "-62135596800001",
        "-62135596800000", "253402300799999",
    ]
    /// Values each field takes.
    static let ordinary = ["statusCode": ["200", "100", #""203""#, "2e2", "-0"], "durationMs": ["90", "812.5", #""90""#, "0"]]

    /// One generated record: its text, its probe (how it is found again) and the paths of
    /// the fields given an extreme value (a refusal must name one of them).
    struct Probe {
        var json: String
        var id: String
        var extremePaths: [String]
    }

    struct Sweep {
        var random: SeededRandom
        var next = 0
        var accepted: Set<String> = []
        var refused = 0
        var incident: String?

        mutating func id() -> String {
            next += 1
            return "p\(next)"
        }

        /// A field's value: extreme half of the time; the path is noted when it is.
        mutating func value(_ path: String, time: Bool = false, into paths: inout [String]) -> String {
            guard random.below(2) == 0 else {
                let field = String(path.split(separator: ".").last ?? "")
                return time ? "\(1_795_000_000_000 + Int64(random.below(1_000_000)))" : random.pick(ExtremeValueSweepTests.ordinary[field]!)
            }
            paths.append(path)
            return random.pick(
                time ? ExtremeValueSweepTests.extremeTimes + ExtremeValueSweepTests.extremes : ExtremeValueSweepTests.extremes)
        }

        mutating func event() -> Probe {
            let id = self.id()
            var paths: [String] = []
            var data = #""operation":"enroll""#
            var top = ""
            for field in ["statusCode", "durationMs"] where random.below(3) > 0 {
                if random.below(3) > 0 {
                    data += #","\#(field)":\#(value("data.\(field)", into: &paths))"#
                } else {
                    top += #","\#(field)":\#(value(field, into: &paths))"#
                }
            }
            if random.below(2) == 0 { top += #","time":\#(value("time", time: true, into: &paths))"# }
            let json =
                #"{"name":"EnrollmentCall","appId":"\#(ExtremeValueSweepTests.app)","deviceId":"\#(ExtremeValueSweepTests.device)","probe":"\#(id)"\#(top),"data":{\#(data)}}"#
            return Probe(json: json, id: id, extremePaths: paths)
        }

        mutating func log() -> Probe {
            let id = self.id()
            var paths: [String] = []
            var fields = ""
            if random.below(3) > 0 { fields += #","time":\#(value("time", time: true, into: &paths))"# }
            // Not interpreted in a log record: only a number past a double's range is refused.
            if random.below(2) == 0 { fields += #","statusCode":\#(value("statusCode", into: &paths))"# }
            let json =
                #"{"appId":"\#(ExtremeValueSweepTests.app)","deviceId":"\#(ExtremeValueSweepTests.device)","level":"info","message":"sweep","probe":"\#(id)"\#(fields)}"#
            return Probe(json: json, id: id, extremePaths: paths)
        }

        /// The same kind of record as OTLP: severity, times and the mapped attributes.
        mutating func otlp() -> (LogRecord, Probe) {
            let id = self.id()
            var paths: [String] = []
            var r = LogRecord()
            r.body.stringValue = "sweep"
            r.attributes = [Self.pair("probe", string: id)]
            let event = random.below(2) == 0
            if event {
                r.eventName = "EnrollmentCall"
                for field in ["statusCode", "durationMs"] where random.below(3) > 0 {
                    r.attributes.append(Self.pair(field, Self.anyValue(value("data.\(field)", into: &paths))))
                }
            } else if random.below(2) == 0 {
                paths.append("severityNumber")
                r.severityNumber = .init(rawValue: random.pick([-1, 0, 24, 25, Int(Int32.max), Int(Int32.min)])) ?? .unspecified
            } else {
                r.severityNumber = .init(rawValue: 13) ?? .unspecified
            }
            for field in ["timeUnixNano", "observedTimeUnixNano"] where random.below(3) == 0 {
                let extreme = random.below(2) == 0
                let nanos: UInt64 =
                    extreme ? random.pick([0, 1, UInt64(Int64.max), UInt64(Int64.max) + 1, .max]) : 1_795_000_000_000_000_000
                if extreme { paths.append(field) }
                if field == "timeUnixNano" { r.timeUnixNano = nanos } else { r.observedTimeUnixNano = nanos }
            }
            return (r, Probe(json: "", id: id, extremePaths: paths))
        }

        static func pair(_ key: String, string: String) -> KeyValue {
            var v = AnyValue()
            v.stringValue = string
            return pair(key, v)
        }

        static func pair(_ key: String, _ value: AnyValue) -> KeyValue {
            var kv = KeyValue()
            kv.key = key
            kv.value = value
            return kv
        }

        /// An attribute as an SDK would send the JSON value: an int when it is one, a double
        /// when it parses as one (1e400 becomes infinity), else a string.
        static func anyValue(_ json: String) -> AnyValue {
            var v = AnyValue()
            if let i = Int64(json) {
                v.intValue = i
            } else if let d = Double(json) {
                v.doubleValue = d
            } else {
                v.stringValue = json.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            return v
        }

        /// Checks an answer's refusals against the probes sent: each names an extreme field
        /// of its record, and records without extreme values are all accepted.
        mutating func settle(_ probes: [Probe], rejected: [(line: Int, error: String)], route: String) {
            let refusedLines = Dictionary(rejected.map { ($0.line, $0.error) }, uniquingKeysWith: { a, _ in a })
            for (k, probe) in probes.enumerated() {
                guard let error = refusedLines[k + 1] else {
                    accepted.insert(probe.id)
                    continue
                }
                refused += 1
                #expect(
                    probe.extremePaths.contains { error.hasPrefix($0 + ":") || error.hasPrefix("duplicate member \($0)") },
                    "\(route): '\(error)' names none of \(probe.extremePaths) in \(probe.json)")
            }
        }
    }

    @Test func extremeValuesOnEveryRouteAreRefusedByNameAndEveryReaderStillAnswers() async throws {
        try await IngestHarness.run { h in
            var sweep = Sweep(random: SeededRandom(seed: PropertyScale.seed(2301)))
            for _ in 0..<PropertyScale.cases(10) {
                try await Self.native(h, &sweep)
                try await Self.otlp(h, &sweep)
            }
            #expect(sweep.refused > 0 && !sweep.accepted.isEmpty)
            let all = Timestamp.acceptedRange
            for (token, pii) in [
                (h.adminToken, true),
                (try await h.components.tokens.create(name: "r", scopes: [.read, .bundle], apps: [], now: 0).secret, false),
            ] {
                let read = try await EveryReader(h: h, token: token, piiAllowed: pii).read(
                    device: Self.device, incident: sweep.incident, since: all.lowerBound, until: all.upperBound)
                func probes(_ records: [[String: Any]]) -> Set<String> {
                    Set(records.compactMap { ($0["probe"] ?? ($0["data"] as? [String: Any])?["probe"]) as? String })
                }
                #expect(probes(read.events + read.logs) == sweep.accepted, "query answers")
                for (name, members) in read.bundles where name.hasSuffix("device") {
                    let lines = EveryReader.lines(
                        Array(((members["telemetry.ndjson"] ?? "") + (members["logs.ndjson"] ?? "")).utf8), in: name)
                    #expect(probes(lines) == sweep.accepted, "\(name)")
                }
            }
        }
    }

    /// NDJSON and JSON-array events, NDJSON log records, and a diagnostic upload's records.
    static func native(_ h: IngestHarness, _ sweep: inout Sweep) async throws {
        let events = (0..<6).map { _ in sweep.event() }
        let asArray = sweep.random.below(2) == 0
        let body = asArray ? "[" + events.map(\.json).joined(separator: ",") + "]" : events.map(\.json).joined(separator: "\n")
        sweep.settle(events, rejected: try await post(h, "/v1/telemetry", body), route: asArray ? "telemetry array" : "telemetry")
        let logs = (0..<6).map { _ in sweep.log() }
        sweep.settle(logs, rejected: try await post(h, "/v1/logs", logs.map(\.json).joined(separator: "\n")), route: "logs")
        let upload = (0..<4).map { _ in sweep.log() }
        let uploadBody =
            #"{"appId":"\#(app)","deviceId":"\#(device)","description":"sweep","logs":[\#(upload.map(\.json).joined(separator: ","))]}"#
        let (status, answer) = try await send(h, "/v1/diagnostics", Array(uploadBody.utf8), contentType: "application/json")
        #expect(status == .created, "\(String(decoding: answer, as: UTF8.self))")
        let parsed = (try? JSONSerialization.jsonObject(with: Data(answer))) as? [String: Any] ?? [:]
        sweep.incident = ((parsed["incident"] as? [String: Any])?["id"] as? String) ?? sweep.incident
        sweep.settle(upload, rejected: rejections(parsed), route: "diagnostics")
    }

    /// OTLP export requests in protobuf and in JSON, at most five records each so the
    /// partial-success message quotes every refusal.
    static func otlp(_ h: IngestHarness, _ sweep: inout Sweep) async throws {
        for json in [false, true] {
            let generated = (0..<5).map { _ in sweep.otlp() }
            var request = ExportRequest()
            var resource = Opentelemetry_Proto_Logs_V1_ResourceLogs()
            resource.resource.attributes = [Sweep.pair("service.name", string: app), Sweep.pair("device.id", string: device)]
            var scope = Opentelemetry_Proto_Logs_V1_ScopeLogs()
            scope.logRecords = generated.map(\.0)
            resource.scopeLogs = [scope]
            request.resourceLogs = [resource]
            let body: [UInt8] = json ? try request.jsonUTF8Bytes() : try request.serializedBytes()
            let (status, answer) = try await send(h, "/v1/logs", body, contentType: json ? "application/json" : "application/x-protobuf")
            #expect(status == .ok, "\(String(decoding: answer, as: UTF8.self))")
            let response = json ? try ExportResponse(jsonUTF8Bytes: answer) : try ExportResponse(serializedBytes: answer)
            let rejected = quotedRefusals(response.partialSuccess.errorMessage)
            #expect(rejected.count == Int(response.partialSuccess.rejectedLogRecords), "\(response.partialSuccess.errorMessage)")
            sweep.settle(generated.map(\.1), rejected: rejected, route: json ? "OTLP JSON" : "OTLP protobuf")
        }
    }

    static func send(_ h: IngestHarness, _ uri: String, _ body: [UInt8], contentType: String) async throws -> (HTTPResponse.Status, [UInt8])
    {
        try await h.client.execute(
            uri: uri, method: .post, headers: [.authorization: "Bearer \(h.adminToken)", .contentType: contentType],
            body: ByteBuffer(bytes: body)
        ) { ($0.status, Array(buffer: $0.body)) }
    }

    /// A native ingest answer's refusals: a 200 with some, or a 400 when every line was refused.
    static func post(_ h: IngestHarness, _ uri: String, _ body: String) async throws -> [(line: Int, error: String)] {
        let (status, answer) = try await send(h, uri, Array(body.utf8), contentType: "application/x-ndjson")
        #expect(status == .ok || status == .badRequest, "\(uri): \(status) \(String(decoding: answer, as: UTF8.self))")
        let parsed = (try? JSONSerialization.jsonObject(with: Data(answer))) as? [String: Any]
        #expect(parsed != nil, "\(uri): the answer does not parse")
        return rejections(parsed ?? [:])
    }

    static func rejections(_ answer: [String: Any]) -> [(line: Int, error: String)] {
        (answer["rejected"] as? [[String: Any]] ?? []).compactMap { r in
            guard let line = r["line"] as? Int, let error = r["error"] as? String else { return nil }
            return (line, error)
        }
    }

    /// "2 log records rejected: record 1: ...; record 4: ..." as (position, reason) pairs.
    static func quotedRefusals(_ message: String) -> [(line: Int, error: String)] {
        guard let colon = message.range(of: "rejected: ") else { return [] }
        return message[colon.upperBound...].components(separatedBy: "; ").compactMap { part in
            guard part.hasPrefix("record "), let sep = part.range(of: ": ") else { return nil }
            guard let line = Int(part[part.index(part.startIndex, offsetBy: 7)..<sep.lowerBound]) else { return nil }
            return (line, String(part[sep.upperBound...]))
        }
    }
}
