/// One value bound into a ``ClickHouseSQL`` statement, with its ClickHouse type. The binder
/// renders it in one of two forms and nowhere else: as a literal the SQL parser reads back
/// byte for byte (18.16, which has no server-side parameters), or as the text of a
/// `param_` argument (19.11+).
public enum ClickHouseValue: Sendable, Hashable {
    case string(String)
    /// Arbitrary bytes, rendered so that invalid UTF-8 reaches the server unchanged.
    case bytes([UInt8])
    case int(Int64)
    case uint(UInt64)
    case float(Double)
    case stringArray([String])
    case null

    /// The type a server-side parameter is declared with.
    var typeName: String {
        switch self {
        case .string, .bytes: "String"
        case .int: "Int64"
        case .uint: "UInt64"
        case .float: "Float64"
        case .stringArray: "Array(String)"
        case .null: "Nullable(String)"
        }
    }

    /// The value as a ClickHouse SQL literal. Strings are single-quoted with every byte that
    /// could end the literal or change its meaning escaped: quote, backslash, every control
    /// byte (NUL, newline, ...) and DEL as `\xHH`; `.bytes` also writes every byte at or above
    /// 0x80 as `\xHH`, so invalid UTF-8 cannot confuse the parser either.
    public var literal: String {
        switch self {
        case .string(let s): Self.quoted(Array(s.utf8), escapeHighBytes: false)
        case .bytes(let b): Self.quoted(b, escapeHighBytes: true)
        case .int(let i): String(i)
        case .uint(let u): String(u)
        case .float(let d): Self.floatLiteral(d)
        case .stringArray(let a): "[" + a.map { Self.quoted(Array($0.utf8), escapeHighBytes: false) }.joined(separator: ", ") + "]"
        case .null: "NULL"
        }
    }

    /// The value as `param_` text, which the server reads in its escaped (TSV) format:
    /// backslash, tab, newline and the other control bytes are backslash-escaped.
    var parameterText: String {
        switch self {
        case .string(let s): Self.escapedText(Array(s.utf8), escapeHighBytes: false)
        case .bytes(let b): Self.escapedText(b, escapeHighBytes: true)
        case .int(let i): String(i)
        case .uint(let u): String(u)
        case .float(let d): Self.floatLiteral(d)
        case .stringArray(let a): "[" + a.map { Self.quoted(Array($0.utf8), escapeHighBytes: false) }.joined(separator: ",") + "]"
        case .null: "\\N"
        }
    }

    static func floatLiteral(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        return "\(d)"
    }

    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    static func quoted(_ bytes: [UInt8], escapeHighBytes: Bool) -> String {
        var out: [UInt8] = [UInt8(ascii: "'")]
        out.reserveCapacity(bytes.count + 2)
        for b in bytes {
            switch b {
            case UInt8(ascii: "'"): out += [UInt8(ascii: "\\"), UInt8(ascii: "'")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0..<0x20, 0x7F: out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            case 0x80...0xFF where escapeHighBytes:
                out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "'"))
        return String(decoding: out, as: UTF8.self)
    }

    static func escapedText(_ bytes: [UInt8], escapeHighBytes: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for b in bytes {
            switch b {
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0..<0x20, 0x7F: out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            case 0x80...0xFF where escapeHighBytes:
                out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            default: out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
