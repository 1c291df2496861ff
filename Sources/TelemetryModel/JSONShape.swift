/// A single pass over a record's bytes that enforces the structural limits (depth, field
/// count, string length) before the real decoder allocates anything, and tells whether the
/// record has whitespace outside strings that must go before it is stored as one line.
enum JSONShape {
    struct Info {
        var hasLayoutWhitespace: Bool
    }

    static func check(_ b: UnsafeBufferPointer<UInt8>, limits: DecodeLimits) -> Result<Info, ShapeError> {
        var depth = 0
        var fields = 0
        var inString = false
        var escaped = false
        var stringStart = 0
        var layout = false
        var i = 0
        var first = true
        while i < b.count {
            let c = b[i]
            if inString {
                if escaped {
                    escaped = false
                } else if c == 0x5C {
                    escaped = true
                } else if c == 0x22 {
                    inString = false
                    if i - stringStart > limits.maxStringBytes {
                        return .failure(.stringTooLong(limits.maxStringBytes))
                    }
                } else if c < 0x20 {
                    return .failure(.syntax("control character inside a string"))
                }
            } else {
                switch c {
                case 0x22:
                    inString = true
                    stringStart = i + 1
                case 0x7B, 0x5B:  // { [
                    if first && c != 0x7B { return .failure(.notAnObject) }
                    depth += 1
                    if depth > limits.maxDepth { return .failure(.tooDeep(limits.maxDepth)) }
                case 0x7D, 0x5D:
                    depth -= 1
                    if depth < 0 { return .failure(.syntax("unbalanced brackets")) }
                case 0x3A:  // ':' outside a string separates a member name from its value
                    fields += 1
                    if fields > limits.maxFields { return .failure(.tooManyFields(limits.maxFields)) }
                case 0x20, 0x09, 0x0A, 0x0D:
                    layout = true
                default:
                    if first { return .failure(.notAnObject) }
                }
                first = false
            }
            i += 1
        }
        if inString { return .failure(.syntax("unterminated string")) }
        if depth != 0 { return .failure(.syntax("unbalanced brackets")) }
        return .success(Info(hasLayoutWhitespace: layout))
    }

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
