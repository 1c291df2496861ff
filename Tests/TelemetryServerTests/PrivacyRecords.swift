import Compression
import Foundation
import HTTPTypes
import OTLP
import SwiftProtobuf
import TelemetryModel

/// Request bodies for every ingest route, built from a `SecretGenerator`, and what each
/// should store.
struct PrivacyRecords {
    static let app = "com.contoso.privacy"

    var g: SecretGenerator
    /// Records each route should have stored, by kind.
    var events = 0
    var logs = 0

    init(seed: UInt64) { g = SecretGenerator(seed: seed) }

    /// A client string in a place a stats group key, a timeline or a journal field shows:
    /// mostly a plain value, sometimes an address or a credential.
    mutating func clientString(_ plain: String) -> Piece {
        switch g.rng.below(10) {
        case 0: return g.email()
        case 1: return g.credential()
        default: return Piece(plain)
        }
    }

    mutating func device() -> Piece { g.chance(0.2) ? g.email() : Piece("dev-\(g.hex(6))") }

    mutating func event() -> String {
        let (name, key, vocabulary) = g.rng.pick([
            ("AppLaunch", "managementType", ["MDM", "MAM-WE", "Unmanaged"]),
            ("EnrollmentCall", "operation", ["enroll", "policyCheckIn", "unenroll"]),
            ("IntuneAction", "action", ["SelectiveWipe", "PinPrompt", "AppRestart"]),
        ])
        var used: Set<String> = [key, "errorString", "statusCode", "durationMs"]
        var data = ["\"\(key)\":\(clientString(g.rng.pick(vocabulary)).json)", "\"errorString\":\(g.text(verbose: false).json)"]
        if name == "EnrollmentCall" { data += ["\"statusCode\":\(g.rng.pick([100, 200, 216]))", "\"durationMs\":\(g.rng.below(900))"] }
        data += g.members(g.rng.below(3), verbose: false, depth: 1, used: &used)
        var top = [
            "\"name\":\"\(name)\"", "\"appId\":\"\(Self.app)\"", "\"deviceId\":\(device().json)",
            "\"data\":{\(data.joined(separator: ","))}",
        ]
        if g.chance(0.6) { top.append("\"identity\":\(g.identityValue().json)") }
        var topUsed: Set<String> = ["name", "appId", "deviceId", "data", "identity"]
        top += g.members(g.rng.below(3), verbose: false, depth: 0, used: &topUsed)
        events += 1
        return "{" + top.joined(separator: ",") + "}"
    }

    mutating func logRecord(includeApp: Bool = true) -> String {
        let level = g.rng.pick(["verbose", "verbose", "info", "warning", "error"])
        let verbose = level == "verbose"
        var top = ["\"level\":\"\(level)\"", "\"message\":\(g.text(verbose: verbose).json)", "\"component\":\"Comp\(g.hex(2))\""]
        if includeApp { top += ["\"appId\":\"\(Self.app)\"", "\"deviceId\":\(device().json)"] }
        if g.chance(0.5) { top.append("\"identity\":\(g.identityValue().json)") }
        if g.chance(0.5) { top.append("\"thread\":\"main\"") }
        var used: Set<String> = ["level", "message", "component", "appId", "deviceId", "identity", "thread"]
        top += g.members(g.rng.below(4), verbose: verbose, depth: 0, used: &used)
        logs += 1
        return "{" + top.joined(separator: ",") + "}"
    }

    /// One console-export line (single-line: a continuation line is another record's business).
    mutating func textLine() -> String {
        let level = g.rng.pick(["VERBOSE", "INFO", "WARNING", "ERROR"])
        logs += 1
        let text = g.text(verbose: level == "VERBOSE", multiline: false).decoded
        return "\(Timestamp.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))) [\(level)] [Console] \(text)"
    }

    mutating func diagnostic() -> String {
        let records = (0..<(1 + g.rng.below(4))).map { _ in logRecord(includeApp: false) }
        return #"{"appId":"\#(Self.app)","deviceId":\#(device().json),"identity":\#(g.identityValue().json),"#
            + #""description":\#(g.text(verbose: true).json),"logs":[\#(records.joined(separator: ","))]}"#
    }

    typealias ExportRequest = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest

    mutating func otlpValue(_ text: String) -> Opentelemetry_Proto_Common_V1_AnyValue {
        var v = Opentelemetry_Proto_Common_V1_AnyValue()
        v.stringValue = text
        return v
    }

    mutating func otlpAttribute(_ key: String, _ text: String) -> Opentelemetry_Proto_Common_V1_KeyValue {
        var kv = Opentelemetry_Proto_Common_V1_KeyValue()
        kv.key = key
        kv.value = otlpValue(text)
        return kv
    }

    /// OpenTelemetry `user.*`/`enduser.*` attributes and free ones with text.
    mutating func otlpAttributes(verbose: Bool) -> [Opentelemetry_Proto_Common_V1_KeyValue] {
        var out: [Opentelemetry_Proto_Common_V1_KeyValue] = []
        for key in ["user.name", "user.full_name", "user.id", "enduser.pseudo.id", "user.email"] where g.chance(0.4) {
            out.append(otlpAttribute(key, g.identityValue().decoded))
        }
        for i in 0..<g.rng.below(3) { out.append(otlpAttribute("app.note\(i)", g.text(verbose: verbose).decoded)) }
        if g.chance(0.3) {
            var nested = Opentelemetry_Proto_Common_V1_KeyValueList()
            nested.values = [otlpAttribute(g.email().decoded, "x"), otlpAttribute("detail", g.text(verbose: verbose).decoded)]
            var kv = Opentelemetry_Proto_Common_V1_KeyValue()
            kv.key = "app.nested"
            kv.value.kvlistValue = nested
            out.append(kv)
        }
        return out
    }

    mutating func otlpRequest() -> ExportRequest {
        var request = ExportRequest()
        var resourceLogs = Opentelemetry_Proto_Logs_V1_ResourceLogs()
        resourceLogs.resource.attributes =
            [otlpAttribute("service.name", Self.app), otlpAttribute("device.id", device().decoded)]
            + (g.chance(0.5) ? [otlpAttribute("enduser.id", g.identityValue().decoded)] : [])
            + otlpAttributes(verbose: false)
        var scope = Opentelemetry_Proto_Logs_V1_ScopeLogs()
        scope.scope.name = "Enrollment"
        scope.logRecords = (0..<(1 + g.rng.below(4))).map { _ in
            var r = Opentelemetry_Proto_Logs_V1_LogRecord()
            let severity = g.rng.pick([1, 5, 9, 13, 17])
            r.severityNumber = .init(rawValue: severity) ?? .unspecified
            r.body = otlpValue(g.text(verbose: severity <= 8).decoded)
            r.attributes = otlpAttributes(verbose: severity <= 8)
            r.timeUnixNano = UInt64(Date().timeIntervalSince1970 * 1_000_000_000)
            logs += 1
            return r
        }
        resourceLogs.scopeLogs = [scope]
        request.resourceLogs = [resourceLogs]
        return request
    }

    /// `body` compressed by a randomly chosen Content-Encoding (or none).
    mutating func encode(_ body: [UInt8], headers: inout HTTPFields) throws -> [UInt8] {
        switch g.rng.below(4) {
        case 0:
            headers[.contentEncoding] = "gzip"
            return try Deflate.compress(body, format: .gzip)
        case 1:
            headers[.contentEncoding] = "deflate"
            return try Deflate.compress(body, format: g.chance(0.5) ? .zlib : .raw)
        default: return body
        }
    }
}
