/// The body of `POST /v1/diagnostics`: what the SDK's diagnostic console collects when a
/// user chooses "share logs" — who and where, the user's own description, and the logs,
/// as an array of records (`logs`) and/or a console text export (`text`).
///
///     {"appId": "com.contoso.app", "deviceId": "...", "identity": "user@contoso.com",
///      "description": "cannot open attachments", "settings": {"MAMTelemetryUsePPE": true},
///      "logs": [{"time": "...", "level": "error", "message": "..."}], "text": "..."}
///
/// Read in one pass by the record scanner's tokenizer. The decode limits apply to the outer
/// object (its depth, members and strings such as `description`); the `logs` records and
/// the `text` lines are limited on their own when decoded, record by record.
public struct DiagnosticUpload: Sendable {
    public var appId: String
    public var deviceId: String?
    public var sessionId: String?
    public var identity: String?
    public var description: String?
    public var flags: AppFlags
    /// The `logs` member's text: a JSON array of log records, as the client sent it.
    public var logs: [UInt8]
    public var text: String?

    public struct Invalid: Error, Sendable { public let message: String }

    /// Throws `Invalid` for a body that is not an upload, `RequestLimitError.outerObject`
    /// when the outer object breaks a decode limit.
    public init(json: [UInt8], limits: DecodeLimits) throws {
        var strings: [String: String] = [:]
        var settings: [String: JSONScalar] = [:]
        var logs: Range<Int>?
        var logCount = 0
        var text: String?
        do {
            try json.withUnsafeBufferPointer { bytes in
                var cursor = JSONRecordScanner.Cursor(b: bytes, limits: limits, strictness: .record)
                cursor.skipSpace()
                guard cursor.peek == UInt8(ascii: "{") else { throw Invalid(message: "body must be a JSON object") }
                try cursor.object { key, cursor in
                    switch key {
                    case "logs":
                        guard cursor.peek == UInt8(ascii: "[") else { throw Invalid(message: "logs: expected an array of log records") }
                        // Each record is checked on its own when decoded, refused alone.
                        var records = cursor.walking(under: .walkOnly, strictness: .grammar)
                        let start = records.i
                        try records.array { element in
                            guard element.peek == UInt8(ascii: "{") else {
                                throw Invalid(message: "logs: every element must be a JSON object")
                            }
                            _ = try element.value(capture: false)
                            logCount += 1
                        }
                        logs = start..<records.i
                        cursor.i = records.i
                    case "text":
                        var lines = cursor.walking(under: .walkOnly)
                        text = try Self.optionalString(key, lines.value(capture: true))
                        cursor.i = lines.i
                    case "settings" where cursor.peek == UInt8(ascii: "{"):
                        try cursor.object { name, cursor in settings[name] = try cursor.value(capture: true) }
                    case "appId", "deviceId", "sessionId", "identity", "description":
                        strings[key] = try Self.optionalString(key, cursor.value(capture: true))
                    default:
                        _ = try cursor.value(capture: false)
                    }
                }
                cursor.skipSpace()
                guard cursor.atEnd else { throw ShapeError.syntax("trailing characters after the object") }
            }
        } catch let error as ShapeError {
            switch error {
            case .tooDeep(let n): throw RequestLimitError.outerObject(limit: "maxDepth", value: n)
            case .tooManyFields(let n): throw RequestLimitError.outerObject(limit: "maxFields", value: n)
            case .stringTooLong(let n): throw RequestLimitError.outerObject(limit: "maxStringBytes", value: n)
            case .notAnObject: throw Invalid(message: "body must be a JSON object")
            case .syntax(let why): throw Invalid(message: "body is not valid JSON: \(why)")
            case .duplicateMember, .invalidUnicode, .notFinite: throw Invalid(message: "body: \(error.message)")
            }
        }
        guard let appId = strings["appId"], !appId.isEmpty else { throw Invalid(message: "appId is required") }
        self.appId = appId
        deviceId = strings["deviceId"]
        sessionId = strings["sessionId"]
        identity = strings["identity"]
        description = strings["description"]
        self.text = text
        flags = ScannedFields.flags(settings)
        self.logs = logs.map { Array(json[$0]) } ?? []
        if logCount == 0 && (text ?? "").isEmpty && (description ?? "").isEmpty {
            throw Invalid(message: "a diagnostic upload needs logs, text or a description")
        }
    }

    /// A member that must be a string when present (null counts as absent).
    private static func optionalString(_ key: String, _ value: JSONScalar) throws -> String? {
        switch value {
        case .null: return nil
        case .string(let s): return s
        default: throw Invalid(message: "\(key): expected a string")
        }
    }
}
