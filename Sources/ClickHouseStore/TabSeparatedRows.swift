/// Reads an answer in ClickHouse's `TabSeparated` format: one row per line, fields split by
/// tabs, `\N` for NULL, and inside a field every tab, newline and backslash escaped
/// (`\t`, `\n`, `\\`; also `\b`, `\f`, `\r`, `\0`, `\'`). Chosen over `JSONEachRow` for reads
/// because it is exact (64-bit integers as digits, floats in their shortest round-trip form,
/// the stored JSON's bytes unchanged once unescaped) and cheap to split without a parser.
struct TabSeparatedRows {
    /// The answer, kept whole: fields are slices of it, found through `starts`.
    private let bytes: [UInt8]
    private let columns: Int
    /// Where each field starts, row after row, then one more: field `c` of row `r` is
    /// `starts[r * columns + c] ..< starts[r * columns + c + 1] - 1` (the next start less its
    /// separator). One flat array rather than an array of slices per row (a retain per
    /// field): with the integer and string readers below, the collector's CPU for a scan of
    /// 41k rows in pages of 10,000 fell by about a quarter (issue 26's reads in BENCHMARKS.md).
    private let starts: [Int]

    /// Splits `bytes` into rows of `columns` raw (still escaped) fields; a row with another
    /// number of fields means the answer is not what the statement asked for.
    init(_ bytes: [UInt8], columns: Int, endpoint: String = "-") throws {
        precondition(columns > 0)
        var starts = [0]
        starts.reserveCapacity(bytes.count / 16)
        var fields = 0
        /// A row of another width: the answer is not what the statement asked for.
        func wrongWidth(_ fields: Int) -> ClickHouseError {
            .badResponse(endpoint: endpoint, detail: "a row of \(fields) fields, expected \(columns)")
        }
        let wrongRow: Int? = bytes.withUnsafeBufferPointer { p in
            for i in 0..<p.count {
                let c = p[i]
                guard c <= 0x0A else { continue }
                if c == 0x09 {
                    fields += 1
                    starts.append(i + 1)
                } else if c == 0x0A {
                    fields += 1
                    guard fields == columns else { return fields }
                    starts.append(i + 1)
                    fields = 0
                }
            }
            return nil
        }
        if let wrongRow { throw wrongWidth(wrongRow) }
        // A last row without its newline ends at the end of the answer.
        if let last = bytes.last, last != 0x0A {
            fields += 1
            guard fields == columns else { throw wrongWidth(fields) }
            starts.append(bytes.count + 1)
        }
        self.bytes = bytes
        self.columns = columns
        self.starts = starts
    }

    /// How many rows the answer holds.
    var count: Int { (starts.count - 1) / columns }

    /// Field `column` of row `row`, still escaped.
    func field(_ row: Int, _ column: Int) -> ArraySlice<UInt8> {
        let i = row * columns + column
        return bytes[starts[i]..<(starts[i + 1] - 1)]
    }

    /// Every row as its fields: for small answers, where a copy per row does not matter.
    var rows: [[ArraySlice<UInt8>]] {
        (0..<count).map { r in (0..<columns).map { field(r, $0) } }
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

    static func string(_ field: ArraySlice<UInt8>) -> String {
        guard field.contains(UInt8(ascii: "\\")) else { return String(decoding: field, as: UTF8.self) }
        return String(decoding: bytes(field), as: UTF8.self)
    }

    static func optionalString(_ field: ArraySlice<UInt8>) -> String? { isNull(field) ? nil : string(field) }

    /// A decimal integer as `Int64(String)` reads one: an optional sign, then digits, within
    /// Int64 (read without a String: one per row and column of a page).
    static func int(_ field: ArraySlice<UInt8>) throws -> Int64 {
        let negative = field.first == UInt8(ascii: "-")
        let digits = negative || field.first == UInt8(ascii: "+") ? field.dropFirst() : field
        var value: Int64 = 0
        var valid = !digits.isEmpty
        for c in digits {
            let d = Int64(c) &- 0x30
            guard (0...9).contains(d) else {
                valid = false
                break
            }
            // Accumulated negatively, so Int64.min reads too.
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.subtractingReportingOverflow(d)
            guard !o1, !o2 else {
                valid = false
                break
            }
            value = next
        }
        if valid, !negative, value == .min { valid = false }
        guard valid else {
            throw ClickHouseError.badResponse(endpoint: "-", detail: "'\(String(decoding: field, as: UTF8.self))' is not an integer")
        }
        return negative ? value : -value
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
