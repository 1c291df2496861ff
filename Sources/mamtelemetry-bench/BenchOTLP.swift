import ArgumentParser
import NIOCore
import OTLP
import SwiftProtobuf
import TelemetryModel

/// The wire format of the generator's log batches: our NDJSON, or OTLP/HTTP protobuf as an
/// OpenTelemetry exporter sends it, so both ingest paths are measured on the same records.
enum BenchLogsProtocol: String, ExpressibleByArgument, Sendable {
    case native, otlp
    static let otlpContentType = "application/x-protobuf"
}

/// One generated diagnostic log record, before it is written in either format.
struct BenchLogRecord {
    var time: String
    var verbose: Bool
    var message: String
    var deviceId: String
    var sessionId: String
    var component: String
}

extension BenchData {
    /// Devices per OTLP batch: an exporter sends one resource (app + device) per process, a
    /// collector forwards many; 25 devices of 20 records each sits between the two.
    static let otlpRecordsPerDevice = 20

    /// An `ExportLogsServiceRequest` of `count` records: resource attributes name the app and
    /// device, the component is the instrumentation scope, the session a record attribute.
    mutating func otlpLogs(count: Int) -> [UInt8] {
        var request = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest()
        var left = count
        while left > 0 {
            let n = min(left, Self.otlpRecordsPerDevice)
            left -= n
            let (app, version) = Self.apps[below(Self.apps.count)]
            let device = below(20_000)
            var scopes: [String: [Opentelemetry_Proto_Logs_V1_LogRecord]] = [:]
            var deviceId = ""
            for _ in 0..<n {
                let r = logRecord(device: device)
                deviceId = r.deviceId
                var record = Opentelemetry_Proto_Logs_V1_LogRecord()
                record.timeUnixNano = UInt64(Timestamp.parse(r.time) ?? 0) * 1_000_000
                record.severityNumber = r.verbose ? .debug : .info
                record.severityText = r.verbose ? "DEBUG" : "INFO"
                record.body = Self.anyValue(r.message)
                record.attributes = [Self.attribute("session.id", r.sessionId)]
                scopes[r.component, default: []].append(record)
            }
            var resourceLogs = Opentelemetry_Proto_Logs_V1_ResourceLogs()
            resourceLogs.resource.attributes = [
                Self.attribute("service.name", app), Self.attribute("service.version", version), Self.attribute("device.id", deviceId),
            ]
            resourceLogs.scopeLogs = scopes.sorted { $0.key < $1.key }.map { name, records in
                var scope = Opentelemetry_Proto_Logs_V1_ScopeLogs()
                scope.scope.name = name
                scope.logRecords = records
                return scope
            }
            request.resourceLogs.append(resourceLogs)
        }
        // Serializing a message built here cannot fail (no required fields).
        return (try? request.serializedBytes()) ?? []
    }

    static func anyValue(_ s: String) -> Opentelemetry_Proto_Common_V1_AnyValue {
        var v = Opentelemetry_Proto_Common_V1_AnyValue()
        v.stringValue = s
        return v
    }

    static func attribute(_ key: String, _ value: String) -> Opentelemetry_Proto_Common_V1_KeyValue {
        var kv = Opentelemetry_Proto_Common_V1_KeyValue()
        kv.key = key
        kv.value = anyValue(value)
        return kv
    }
}

extension BenchPool {
    /// Records taken from an OTLP answer: all of them unless `partial_success` rejects some.
    static func otlpAcceptedCount(_ answer: ByteBuffer, records: Int) -> Int {
        let response = try? Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceResponse(
            serializedBytes: Array(answer.readableBytesView))
        return records - Int(response?.partialSuccess.rejectedLogRecords ?? Int64(records))
    }
}
