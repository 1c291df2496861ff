/// Layout helpers for stored records: the one-line form a record is stored in.
enum JSONShape {
    /// Drops whitespace outside strings, so a pretty-printed array element becomes one line.
    static func compact(_ b: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var inString = false
        var escaped = false
        for c in b {
            if inString {
                if escaped { escaped = false } else if c == 0x5C { escaped = true } else if c == 0x22 { inString = false }
                out.append(c)
            } else {
                if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { continue }
                if c == 0x22 { inString = true }
                out.append(c)
            }
        }
        return out
    }
}

enum ShapeError: Error {
    case notAnObject
    case tooDeep(Int)
    case tooManyFields(Int)
    case stringTooLong(Int)
    case syntax(String)

    var message: String {
        switch self {
        case .notAnObject: "not a JSON object"
        case .tooDeep(let n): "JSON nesting deeper than the limit maxDepth=\(n)"
        case .tooManyFields(let n): "more fields than the limit maxFields=\(n)"
        case .stringTooLong(let n): "a string is longer than the limit maxStringBytes=\(n)"
        case .syntax(let why): "not valid JSON: \(why)"
        }
    }
}
