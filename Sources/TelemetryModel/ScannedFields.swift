/// Typed reads of scanned members, shared by the event and log decoders so a client
/// sees one wording whichever decoder read its record.
struct ScannedFields {
    let values: [String: JSONScalar]
    let prefix: String

    func has(_ key: String) -> Bool { values[key] != nil }

    func string(_ key: String) throws -> String? {
        switch values[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw FieldError("\(prefix)\(key): expected a string")
        }
    }

    /// An integer field of the ``InterpretedField`` table: a JSON number with an integral
    /// value (`200`, `2e2`) or a string holding one (some SDKs send numbers as text), within
    /// the field's range. Anything else is refused, naming the field and its range.
    func integer(_ field: InterpretedField) throws -> Int64? {
        guard let text = try numberText(field) else { return nil }
        let path = prefix + field.name
        if let v = Int64(text) {
            guard field.contains(v) else { throw FieldError(field.outOfRange(text, path: path)) }
            return v
        }
        // A fraction, an exponent or more digits than Int64 holds: integral and in range, or refused.
        guard let d = Double(text), d.isFinite else { throw FieldError(field.outOfRange(text, path: path)) }
        guard d == d.rounded() else { throw FieldError(field.wrongType(path: path)) }
        guard let v = Int64(exactly: d), field.contains(v) else { throw FieldError(field.outOfRange(text, path: path)) }
        return v
    }

    /// A number field of the table: a finite JSON number, or a string holding one in JSON's
    /// number grammar (so `NaN`, `Infinity` and `0x1p3` are not numbers), within the range.
    func number(_ field: InterpretedField) throws -> Double? {
        guard let text = try numberText(field) else { return nil }
        guard let d = Double(text), field.contains(d) else { throw FieldError(field.outOfRange(text, path: prefix + field.name)) }
        return d
    }

    /// The text of a numeric field: a number token, or a string that is one.
    private func numberText(_ field: InterpretedField) throws -> String? {
        switch values[field.name] {
        case nil, .null?: return nil
        case .number(let n)?: return n
        case .string(let s)? where Self.isJSONNumber(s): return s
        default: throw FieldError(field.wrongType(path: prefix + field.name))
        }
    }

    /// Whether `s` is a number in RFC 8259's grammar, nothing around it.
    static func isJSONNumber(_ s: String) -> Bool {
        var bytes = Array(s.utf8)
        return bytes.withUnsafeMutableBufferPointer { b in
            var cursor = JSONRecordScanner.Cursor(b: UnsafeBufferPointer(b), limits: .walkOnly)
            guard let first = cursor.peek, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else { return false }
            return (try? cursor.number(keep: false)) != nil && cursor.atEnd
        }
    }

    func bool(_ key: String) throws -> Bool? {
        switch values[key] {
        case nil, .null?: return nil
        case .bool(let b)?: return b
        case .string(let s)?: if let b = FlagValue.string(s).boolValue { return b }
        case .number(let n)?: if let d = Double(n) { return d != 0 }
        default: break
        }
        throw FieldError("\(prefix)\(key): expected a boolean")
    }

    /// The record's device time: epoch milliseconds (a fraction is cut off) or RFC 3339
    /// text of a real instant, within ``InterpretedField/time``'s range.
    func time(_ key: String) throws -> Int64? {
        let field = InterpretedField.time
        let path = prefix + key
        switch values[key] {
        case nil, .null?: return nil
        case .number(let n)?:
            if let v = Int64(n), field.contains(v) { return v }
            guard let d = Double(n), field.contains(d) else { throw FieldError(field.outOfRange(n, path: path)) }
            return Int64(d.rounded(.towardZero))
        case .string(let s)?:
            switch Timestamp.check(s) {
            case .success(let ms):
                guard field.contains(ms) else { throw FieldError(field.outOfRange(s, path: path)) }
                return ms
            case .failure(let invalid):
                throw FieldError("\(path): \(InterpretedField.clip(s)): \(invalid.reason)")
            }
        default:
            throw FieldError("\(path): expected RFC 3339 time (2026-11-21T10:15:30.123Z) or epoch milliseconds")
        }
    }

    /// The record's `settings` object as flags (absent or null: unspecified).
    static func settings(_ record: ScannedRecord) throws -> AppFlags {
        switch record.top["settings"] {
        case nil, .null?: return .unspecified
        case .object?: return flags(record.settings)
        default: throw FieldError("settings: expected an object of flags")
        }
    }

    /// The `settings` members as flag values.
    static func flags(_ settings: [String: JSONScalar]) -> AppFlags {
        var values: [String: FlagValue] = [:]
        for (k, v) in settings {
            switch v {
            case .bool(let b): values[k] = .bool(b)
            case .number(let n): values[k] = Double(n).map(FlagValue.number) ?? .other
            case .string(let s): values[k] = .string(s)
            default: values[k] = .other
            }
        }
        return AppFlags(settings: values)
    }
}

extension WireEvent {
    static let scanner = (
        top: Set([
            "name", "time", "appId", "deviceId", "sessionId", "identity", "eventId", "settings", "data",
            "statusCode", "operation", "managementType", "action", "durationMs", "didSucceed",
            "id", "receivedAt", "env", "incident",
        ]),
        data: Set(["statusCode", "operation", "managementType", "action", "durationMs", "didSucceed"])
    )

    /// The same rules as `init(from:)`, over a scanned record.
    init(scanned r: ScannedRecord) throws {
        let top = ScannedFields(values: r.top, prefix: "")
        for reserved in ["id", "receivedAt", "env", "incident"] where top.has(reserved) {
            throw FieldError("\(reserved) is a reserved field set by the server; rename it")
        }
        guard let name = try top.string("name"), !name.isEmpty else { throw FieldError("name is required") }
        guard let appId = try top.string("appId"), !appId.isEmpty else { throw FieldError("appId is required") }
        self.name = name
        self.appId = appId
        time = try top.time("time")
        deviceId = try top.string("deviceId")
        sessionId = try top.string("sessionId")
        identity = try top.string("identity")
        eventId = try top.string("eventId")
        flags = try ScannedFields.settings(r)
        var data: ScannedFields?
        switch r.top["data"] {
        case nil, .null?: break
        case .object?: data = ScannedFields(values: r.data, prefix: "data.")
        default: throw FieldError("data: expected an object")
        }
        /// `data`'s member, else the top level's; both are checked when both are there, since
        /// a reader may look at either.
        func pick<T>(_ read: (ScannedFields) throws -> T?) throws -> T? {
            let inData = try data.flatMap { try read($0) }
            let atTop = try read(top)
            return inData ?? atTop
        }
        statusCode = try pick { try $0.integer(.statusCode) }.map { Int($0) }
        operation = try pick { try $0.string("operation") }
        managementType = try pick { try $0.string("managementType") }
        action = try pick { try $0.string("action") }
        durationMs = try pick { try $0.number(.durationMs) }
        didSucceed = try pick { try $0.bool("didSucceed") }
    }
}
