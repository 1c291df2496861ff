import Foundation
import OTLP
import SwiftProtobuf
import TelemetryModel

typealias PBLogRecord = Opentelemetry_Proto_Logs_V1_LogRecord
typealias PBKeyValue = Opentelemetry_Proto_Common_V1_KeyValue
typealias PBAnyValue = Opentelemetry_Proto_Common_V1_AnyValue
typealias PBRequest = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest
typealias PBResponse = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceResponse

/// An attribute value as the SDKs build them.
indirect enum Attr: Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case bytes([UInt8])
    case array([Attr])
    case kvlist([(String, Attr)])

    var proto: PBAnyValue {
        var v = PBAnyValue()
        switch self {
        case .string(let s): v.stringValue = s
        case .int(let i): v.intValue = i
        case .double(let d): v.doubleValue = d
        case .bool(let b): v.boolValue = b
        case .bytes(let b): v.bytesValue = Data(b)
        case .array(let a): v.arrayValue.values = a.map(\.proto)
        case .kvlist(let m): v.kvlistValue.values = m.map { attribute($0.0, $0.1) }
        }
        return v
    }
}

func attribute(_ key: String, _ value: Attr) -> PBKeyValue {
    var kv = PBKeyValue()
    kv.key = key
    kv.value = value.proto
    return kv
}

func logRecord(
    body: Attr? = nil, severity: Int = 0, severityText: String = "", timeNanos: UInt64 = 0, observedNanos: UInt64 = 0,
    eventName: String = "", attributes: [(String, Attr)] = [], traceID: [UInt8] = [], spanID: [UInt8] = []
) -> PBLogRecord {
    var r = PBLogRecord()
    if let body { r.body = body.proto }
    r.severityNumber = .init(rawValue: severity) ?? .unspecified
    r.severityText = severityText
    r.timeUnixNano = timeNanos
    r.observedTimeUnixNano = observedNanos
    r.eventName = eventName
    r.attributes = attributes.map { attribute($0.0, $0.1) }
    r.traceID = Data(traceID)
    r.spanID = Data(spanID)
    return r
}

/// One resource with one scope per `(scope, records)` pair.
func resourceLogs(_ resource: [(String, Attr)], _ scopes: [(String, [PBLogRecord])]) -> Opentelemetry_Proto_Logs_V1_ResourceLogs {
    var rl = Opentelemetry_Proto_Logs_V1_ResourceLogs()
    rl.resource.attributes = resource.map { attribute($0.0, $0.1) }
    rl.scopeLogs = scopes.map { name, records in
        var sl = Opentelemetry_Proto_Logs_V1_ScopeLogs()
        sl.scope.name = name
        sl.logRecords = records
        return sl
    }
    return rl
}

func request(_ resources: Opentelemetry_Proto_Logs_V1_ResourceLogs...) -> PBRequest {
    var r = PBRequest()
    r.resourceLogs = resources
    return r
}

extension PBRequest {
    var protobuf: [UInt8] { get throws { try serializedBytes() } }
}

/// A decoded record's stored JSON as a dictionary.
func object(_ record: DecodedRecord) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(record.json)) as? [String: Any] ?? [:]
}

/// 2026-11-21T10:15:30.123Z in the OTLP unit.
let sampleNanos: UInt64 = 1_795_256_130_123_000_000 + 456_789
let sampleTime = "2026-11-21T10:15:30.123Z"
let mailResource: [(String, Attr)] = [
    ("service.name", .string("com.contoso.mail")), ("service.version", .string("4.2411.0")),
    ("device.id", .string("dev-1")), ("telemetry.sdk.language", .string("swift")),
]
