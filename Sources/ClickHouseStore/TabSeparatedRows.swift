/// Reads an answer in ClickHouse's `TabSeparated` format: one row per line, fields split by
/// tabs, `\N` for NULL, and inside a field every tab, newline and backslash escaped
/// (`\t`, `\n`, `\\`; also `\b`, `\f`, `\r`, `\0`, `\'`). Chosen over `JSONEachRow` for reads
/// because it is exact (64-bit integers as digits, floats in their shortest round-trip form,
/// the stored JSON's bytes unchanged once unescaped) and cheap to split without a parser.
struct TabSeparatedRows {
    let rows: [[ArraySlice<UInt8>]]

    /// Splits `bytes` into rows of `columns` raw (still escaped) fields; a row with another
    /// number of fields means the answer is not what the statement asked for.
    init(_ bytes: [UInt8], columns: Int, endpoint: String = "-") throws {
        var rows: [[ArraySlice<UInt8>]] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.endIndex
            let fields = bytes[start..<end].split(separator: 0x09, omittingEmptySubsequences: false)
            guard fields.count == columns else {
                throw ClickHouseError.badResponse(endpoint: endpoint, detail: "a row of \(fields.count) fields, expected \(columns)")
            }
            rows.append(fields)
            start = end + 1
        }
        self.rows = rows
    }

    static func isNull(_ field: ArraySlice<UInt8>) -> Bool {
        field.count == 2 && field.first == UInt8(ascii: "\\") && field.last == UInt8(ascii: "N")
    }

    /// The field's bytes with the format's escapes undone.
    static func bytes(_ field: ArraySlice<UInt8>) -> [UInt8] {
        guard field.contains(UInt8(ascii: "\\")) else { return Array(field) }
        var out: [UInt8] = []
        out.reserveCapacity(field.count)
        var i = field.startIndex
        while i < field.endIndex {
            let b = field[i]
            i += 1
            guard b == UInt8(ascii: "\\"), i < field.endIndex else {
                out.append(b)
                continue
            }
            let e = field[i]
            i += 1
            switch e {
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "0"): out.append(0x00)
            default: out.append(e)
            }
        }
        return out
    }

    static func string(_ field: ArraySlice<UInt8>) -> String { String(decoding: bytes(field), as: UTF8.self) }

    static func optionalString(_ field: ArraySlice<UInt8>) -> String? { isNull(field) ? nil : string(field) }

    static func int(_ field: ArraySlice<UInt8>) throws -> Int64 {
        guard let v = Int64(String(decoding: field, as: UTF8.self)) else {
            throw ClickHouseError.badResponse(endpoint: "-", detail: "'\(String(decoding: field, as: UTF8.self))' is not an integer")
        }
        return v
    }

    static func optionalInt(_ field: ArraySlice<UInt8>) throws -> Int64? { isNull(field) ? nil : try int(field) }

    static func optionalDouble(_ field: ArraySlice<UInt8>) throws -> Double? {
        guard !isNull(field) else { return nil }
        let text = String(decoding: field, as: UTF8.self)
        switch text {
        case "inf", "+inf": return .infinity
        case "-inf": return -.infinity
        case "nan", "-nan": return .nan
        default:
            guard let v = Double(text) else { throw ClickHouseError.badResponse(endpoint: "-", detail: "'\(text)' is not a number") }
            return v
        }
    }
}
