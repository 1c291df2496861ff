import Foundation
import TelemetryModel

typealias OTLPLogRecord = Opentelemetry_Proto_Logs_V1_LogRecord

/// One OTLP log record rewritten as the native record it stands for: a diagnostic log
/// record, a telemetry event (`AppLaunch`, `EnrollmentCall`, `IntuneAction`), or a refusal
/// with its reason. The native JSON then goes through the native decoders, so every field
/// rule and decode limit applies exactly as for a record posted as NDJSON.
enum MappedRecord: Equatable {
    case log([UInt8])
    case event([UInt8])
    case refused(String)
}

/// The OTLP → native mapping (README "OpenTelemetry (OTLP/HTTP)" has it as a table).
struct RecordMapping {
    let encoding: OTLPEncoding

    /// Native log-record members the mapping writes itself: an attribute by one of these
    /// names would make a second, conflicting member, so its record is refused (the same
    /// rule as native records carrying server-set fields) rather than silently renamed.
    static let logEnvelope: Set<String> = [
        "time", "level", "message", "component", "appId", "appVersion", "deviceId", "sessionId", "identity",
        "eventId", "settings", "eventName", "traceId", "spanId", "resource",
    ]

    func map(_ record: OTLPLogRecord, resource: ResourceContext, scopeName: String) -> MappedRecord {
        let attributes = RecordAttributes(record.attributes)
        /// A consumed attribute as text: the record's own, else its resource's.
        func text(_ key: String) throws(Refusal) -> String? {
            guard let value = attributes.identity[key] ?? resource.identity[key] else { return nil }
            guard let text = value.scalarText else { throw Refusal("attribute '\(key)' must be a string") }
            return text.isEmpty ? nil : text
        }
        // Either source turning a flag on turns it on, as between an event and the registry.
        let flags = Self.flags(attributes.identity).merged(with: Self.flags(resource.identity))

        // The record's EventName field is the name; the `event.name` attribute is the older
        // spelling, read when the field is empty. Any other event name stays an attribute.
        let declared = record.eventName.isEmpty ? attributes.eventName?.scalarText : record.eventName
        let eventName = declared.flatMap { MAMEvent.names.contains($0) ? $0 : nil }
        var free = attributes.free
        if let other = attributes.eventName, other.scalarText != eventName {
            var pair = KeyValue()
            pair.key = SemanticKey.eventName
            pair.value = other
            free.append(pair)
        }

        var w = JSONWriter(capacity: 512)
        do throws(Refusal) {
            guard let appId = try text(SemanticKey.serviceName), !appId.hasPrefix(SemanticKey.unknownServicePrefix) else {
                throw Refusal(
                    "appId is required: set the resource attribute service.name to the app's bundle id (OTEL_SERVICE_NAME=com.contoso.app)")
            }
            w.beginObject()
            if let eventName { w.field("name", eventName) }
            if let ms = try Self.milliseconds(record) { w.field("time", Timestamp.format(milliseconds: ms)) }
            if eventName == nil {
                let severity = record.severityNumber.rawValue
                guard InterpretedField.severityNumber.contains(Int64(severity)) else {
                    throw Refusal(InterpretedField.severityNumber.outOfRange(String(severity), path: "severityNumber"))
                }
                w.field("level", LogLevel(severity: record.severityNumber, text: record.severityText).name)
                w.field("message", record.body.messageText)
                if !scopeName.isEmpty { w.field("component", scopeName) }
            }
            w.field("appId", appId)
            if let v = try text(SemanticKey.serviceVersion) { w.field("appVersion", v) }
            if let v = try text(SemanticKey.deviceID) { w.field("deviceId", v) }
            if let v = try text(SemanticKey.sessionID) { w.field("sessionId", v) }
            if let v = try text(SemanticKey.endUserID) { w.field("identity", v) }
            if let v = try text(SemanticKey.recordUID) { w.field("eventId", v) }
            if flags != .unspecified {
                w.key("settings")
                w.beginObject()
                if let disabled = flags.telemetryDisabled { w.field(AppFlags.Key.telemetryDisabled[0], disabled) }
                if let ppe = flags.usePPE { w.field(AppFlags.Key.usePPE[0], ppe) }
                w.endObject()
            }
            if eventName == nil, !record.eventName.isEmpty { w.field("eventName", record.eventName) }
            if !record.traceID.isEmpty { w.field("traceId", identifierText(record.traceID)) }
            if !record.spanID.isEmpty { w.field("spanId", identifierText(record.spanID)) }
            if eventName != nil {
                var data: [UInt8] = []
                KeyValue.appendObject(free, to: &data)
                w.field("data", rawJSON: data)
                if record.body.value != nil { w.field("body", rawJSON: record.body.json) }
            } else {
                for pair in free {
                    guard !Self.logEnvelope.contains(pair.key) else {
                        throw Refusal(
                            "attribute '\(pair.key)' names a field the OTLP mapping sets itself; rename the attribute")
                    }
                    w.field(pair.key, rawJSON: pair.value.json)
                }
            }
            if let rest = resource.rest { w.field("resource", rawJSON: rest) }
            w.endObject()
        } catch {
            return .refused(error.message)
        }
        return eventName == nil ? .log(w.bytes) : .event(w.bytes)
    }

    /// The record's time in epoch milliseconds (its own, else when it was observed), nil when
    /// neither is set; a count past ``InterpretedField/timeUnixNano``'s range is refused.
    static func milliseconds(_ record: OTLPLogRecord) throws(Refusal) -> Int64? {
        for (name, nanos) in [("timeUnixNano", record.timeUnixNano), ("observedTimeUnixNano", record.observedTimeUnixNano)] where nanos != 0
        {
            guard let signed = Int64(exactly: nanos), InterpretedField.timeUnixNano.contains(signed) else {
                throw Refusal(InterpretedField.timeUnixNano.outOfRange(String(nanos), path: name))
            }
            return signed / 1_000_000
        }
        return nil
    }

    /// The `mam.*` flag attributes of one source.
    static func flags(_ identity: [String: AnyValue]) -> AppFlags {
        AppFlags(telemetryDisabled: identity[SemanticKey.telemetryDisabled]?.flag, usePPE: identity[SemanticKey.usePPE]?.flag)
    }

    /// Trace and span ids as the sender wrote them. Protobuf carries raw bytes: hex. OTLP
    /// JSON writes ids as hex text, which the protobuf JSON reader takes for base64 (a hex
    /// digit is a base64 digit, and 32 or 16 of them need no padding), so re-encoding the
    /// bytes as base64 gives back exactly the hex the sender wrote.
    func identifierText(_ bytes: Data) -> String {
        switch encoding {
        case .protobuf: bytes.map { String(format: "%02x", $0) }.joined()
        case .json: bytes.base64EncodedString()
        }
    }
}

/// A record's attributes, split by what the mapping does with them.
struct RecordAttributes {
    /// Read into the envelope (`SemanticKey.consumed`), last one wins.
    var identity: [String: AnyValue] = [:]
    /// `event.name`, which names an event only when it is one of the SDK's.
    var eventName: AnyValue?
    /// Kept as fields of a log record, or as the `data` of an event.
    var free: [KeyValue] = []

    init(_ pairs: [KeyValue]) {
        for pair in pairs where pair.hasKey {
            if SemanticKey.consumed.contains(pair.key) {
                identity[pair.key] = pair.value
            } else if pair.key == SemanticKey.eventName {
                eventName = pair.value
            } else {
                free.append(pair)
            }
        }
    }
}

/// Why a record was refused, in words a client developer can act on.
struct Refusal: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension AnyValue {
    /// The log message a body stands for: a string as is, anything else as its JSON text
    /// (a structured body stays readable and searchable), nothing as "".
    var messageText: String {
        if case .stringValue(let s)? = value { return s }
        if value == nil { return "" }
        return String(decoding: json, as: UTF8.self)
    }
}
