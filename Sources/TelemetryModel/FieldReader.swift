import Foundation

/// A thin layer over a keyed decoding container that turns type mismatches into messages
/// naming the field (`data.statusCode: expected an integer`) instead of Swift's
/// `DecodingError` dumps, since those messages go back to client developers.
struct FieldReader<K: CodingKey> {
    let container: KeyedDecodingContainer<K>
    let prefix: String

    func has(_ key: K) -> Bool { container.contains(key) }

    func string(_ key: K) throws -> String? {
        guard container.contains(key) else { return nil }
        if (try? container.decodeNil(forKey: key)) == true { return nil }
        guard let v = try? container.decode(String.self, forKey: key) else {
            throw FieldError("\(prefix)\(key.stringValue): expected a string")
        }
        return v
    }

    func int(_ key: K) throws -> Int? {
        guard container.contains(key) else { return nil }
        if (try? container.decodeNil(forKey: key)) == true { return nil }
        if let v = try? container.decode(Int.self, forKey: key) { return v }
        // Tolerate numeric strings: some relays stringify every value.
        if let s = try? container.decode(String.self, forKey: key), let v = Int(s) { return v }
        throw FieldError("\(prefix)\(key.stringValue): expected an integer")
    }

    func double(_ key: K) throws -> Double? {
        guard container.contains(key) else { return nil }
        if (try? container.decodeNil(forKey: key)) == true { return nil }
        if let v = try? container.decode(Double.self, forKey: key) { return v }
        if let s = try? container.decode(String.self, forKey: key), let v = Double(s) { return v }
        throw FieldError("\(prefix)\(key.stringValue): expected a number")
    }

    func bool(_ key: K) throws -> Bool? {
        guard container.contains(key) else { return nil }
        if (try? container.decodeNil(forKey: key)) == true { return nil }
        if let v = try? container.decode(Bool.self, forKey: key) { return v }
        if let s = try? container.decode(FlagValue.self, forKey: key), let v = s.boolValue { return v }
        throw FieldError("\(prefix)\(key.stringValue): expected a boolean")
    }

    /// A time as RFC 3339 text or epoch milliseconds.
    func time(_ key: K) throws -> Int64? {
        guard container.contains(key) else { return nil }
        if (try? container.decodeNil(forKey: key)) == true { return nil }
        if let ms = try? container.decode(Int64.self, forKey: key), Timestamp.acceptedRange.contains(ms) { return ms }
        if let d = try? container.decode(Double.self, forKey: key), let ms = Timestamp.milliseconds(fromJSONNumber: d) { return ms }
        if let s = try? container.decode(String.self, forKey: key), let ms = Timestamp.parse(s), Timestamp.acceptedRange.contains(ms) { return ms }
        throw FieldError("\(prefix)\(key.stringValue): expected RFC 3339 time (2026-11-21T10:15:30.123Z) or epoch milliseconds")
    }

    func settings(_ key: K) throws -> AppFlags {
        guard container.contains(key) else { return .unspecified }
        if (try? container.decodeNil(forKey: key)) == true { return .unspecified }
        guard let dict = try? container.decode([String: FlagValue].self, forKey: key) else {
            throw FieldError("\(prefix)\(key.stringValue): expected an object of flags")
        }
        return AppFlags(settings: dict)
    }
}

struct FieldError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Reports a decoder failure as a short sentence a client developer can act on.
func describe(_ error: Error) -> String {
    if let e = error as? FieldError { return e.message }
    if let e = error as? DecodingError {
        switch e {
        case .dataCorrupted: return "not valid JSON"
        case .keyNotFound(let key, _): return "\(key.stringValue) is required"
        case .typeMismatch(_, let ctx), .valueNotFound(_, let ctx):
            let path = ctx.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? "not a JSON object" : "\(path): wrong type"
        @unknown default: return "not valid JSON"
        }
    }
    return "not valid JSON"
}
