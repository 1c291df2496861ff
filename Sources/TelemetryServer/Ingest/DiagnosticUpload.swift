import Foundation
import TelemetryModel

/// The body of `POST /v1/diagnostics`: what the SDK's diagnostic console collects when a
/// user chooses "share logs" — who and where, the user's own description, and the logs,
/// as an array of records (`logs`) and/or a console text export (`text`).
///
///     {"appId": "com.contoso.app", "deviceId": "...", "identity": "user@contoso.com",
///      "description": "cannot open attachments", "settings": {"MAMTelemetryUsePPE": true},
///      "logs": [{"time": "...", "level": "error", "message": "..."}], "text": "..."}
struct DiagnosticUpload {
    var appId: String
    var deviceId: String?
    var sessionId: String?
    var identity: String?
    var description: String?
    var flags: AppFlags
    /// The `logs` array re-serialised one record per line, for the NDJSON log decoder.
    var ndjsonLogs: [UInt8]
    var text: String?

    struct Invalid: Error { let message: String }

    init(json: [UInt8], limits: DecodeLimits) throws {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(json))
        } catch {
            throw Invalid(message: "body is not valid JSON")
        }
        guard let top = object as? [String: Any] else { throw Invalid(message: "body must be a JSON object") }
        guard let appId = top["appId"] as? String, !appId.isEmpty else { throw Invalid(message: "appId is required") }
        self.appId = appId
        func optionalString(_ key: String) throws -> String? {
            guard let v = top[key], !(v is NSNull) else { return nil }
            guard let s = v as? String else { throw Invalid(message: "\(key): expected a string") }
            return s
        }
        deviceId = try optionalString("deviceId")
        sessionId = try optionalString("sessionId")
        identity = try optionalString("identity")
        description = try optionalString("description")
        text = try optionalString("text")
        var flags = AppFlags.unspecified
        if let settings = top["settings"] as? [String: Any] {
            var values: [String: FlagValue] = [:]
            for (k, v) in settings {
                switch v {
                case let b as Bool: values[k] = .bool(b)
                case let n as NSNumber: values[k] = .number(n.doubleValue)
                case let s as String: values[k] = .string(s)
                default: break
                }
            }
            flags = AppFlags(settings: values)
        }
        self.flags = flags
        var ndjson: [UInt8] = []
        if let logs = top["logs"] {
            guard let array = logs as? [Any] else { throw Invalid(message: "logs: expected an array of log records") }
            for element in array {
                guard JSONSerialization.isValidJSONObject(element) else {
                    throw Invalid(message: "logs: every element must be a JSON object")
                }
                ndjson.append(contentsOf: try JSONSerialization.data(withJSONObject: element))
                ndjson.append(0x0A)
            }
        }
        ndjsonLogs = ndjson
        if ndjson.isEmpty && (text ?? "").isEmpty && (description ?? "").isEmpty {
            throw Invalid(message: "a diagnostic upload needs logs, text or a description")
        }
    }
}
