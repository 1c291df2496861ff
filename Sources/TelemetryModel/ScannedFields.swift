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

    func int(_ key: String) throws -> Int? {
        switch values[key] {
        case nil, .null?: return nil
        case .number(let n)?:
            if let v = Int(n) { return v }
            if let d = Double(n), d == d.rounded(), abs(d) < 1e15 { return Int(d) }
        case .string(let s)?:
            if let v = Int(s) { return v }
        default: break
        }
        throw FieldError("\(prefix)\(key): expected an integer")
    }

    func double(_ key: String) throws -> Double? {
        switch values[key] {
        case nil, .null?: return nil
        case .number(let n)?: if let d = Double(n) { return d }
        case .string(let s)?: if let d = Double(s) { return d }
        default: break
        }
        throw FieldError("\(prefix)\(key): expected a number")
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

    func time(_ key: String) throws -> Int64? {
        switch values[key] {
        case nil, .null?: return nil
        case .number(let n)?:
            if let v = Int64(n), Timestamp.acceptedRange.contains(v) { return v }
            if let d = Double(n), let ms = Timestamp.milliseconds(fromJSONNumber: d) { return ms }
        case .string(let s)?:
            if let ms = Timestamp.parse(s), Timestamp.acceptedRange.contains(ms) { return ms }
        default: break
        }
        throw FieldError("\(prefix)\(key): expected RFC 3339 time (2026-11-21T10:15:30.123Z) or epoch milliseconds")
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
        func pick<T>(_ read: (ScannedFields) throws -> T?) throws -> T? {
            if let data, let v = try read(data) { return v }
            return try read(top)
        }
        statusCode = try pick { try $0.int("statusCode") }
        operation = try pick { try $0.string("operation") }
        managementType = try pick { try $0.string("managementType") }
        action = try pick { try $0.string("action") }
        durationMs = try pick { try $0.double("durationMs") }
        didSucceed = try pick { try $0.bool("didSucceed") }
    }
}
