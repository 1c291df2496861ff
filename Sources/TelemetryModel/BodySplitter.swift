/// Cuts a request body into records: NDJSON (one object per line, blank lines skipped) or a
/// JSON array of objects, told apart by the first non-blank byte. Line numbers are 1-based
/// physical lines for NDJSON and 1-based element positions for arrays, which is what a
/// client needs to find the record that was refused.
public enum BodySplitter {
    public struct Element: Sendable {
        public var line: Int
        public var range: Range<Int>
    }

    public enum Split: Sendable {
        case elements([Element], rejected: [LineError])
    }

    /// Splits `body`. Throws `RequestLimitError` when there are more records than allowed,
    /// or a `LineError` for line 1 when a JSON array is malformed as a whole.
    public static func split(_ body: [UInt8], limits: DecodeLimits) throws -> ([Element], [LineError]) {
        var start = 0
        while start < body.count, isSpace(body[start]) { start += 1 }
        if start < body.count, body[start] == UInt8(ascii: "[") {
            return try splitArray(body, from: start, limits: limits)
        }
        var elements: [Element] = []
        var rejected: [LineError] = []
        var lineNo = 0
        var lineStart = 0
        var i = 0
        let n = body.count
        while lineStart < n || (lineStart == n && i < n) {
            i = lineStart
            while i < n, body[i] != 0x0A { i += 1 }
            lineNo += 1
            var lo = lineStart
            var hi = i
            while lo < hi, isSpace(body[lo]) { lo += 1 }
            while hi > lo, isSpace(body[hi - 1]) { hi -= 1 }
            if hi > lo {
                if hi - lo > limits.maxLineBytes {
                    rejected.append(
                        LineError(line: lineNo, error: "line is longer than the limit maxLineBytes=\(limits.maxLineBytes)"))
                } else {
                    elements.append(Element(line: lineNo, range: lo..<hi))
                }
                if elements.count + rejected.count > limits.maxRecordsPerRequest {
                    throw RequestLimitError.tooManyRecords(
                        limit: limits.maxRecordsPerRequest, held: nil, advice: RequestLimitError.splitAdvice)
                }
            }
            lineStart = i + 1
            if i >= n { break }
        }
        return (elements, rejected)
    }

    private static func splitArray(_ b: [UInt8], from open: Int, limits: DecodeLimits) throws -> ([Element], [LineError]) {
        var elements: [Element] = []
        var rejected: [LineError] = []
        var depth = 0
        var inString = false
        var escaped = false
        var elementStart = -1
        var index = 0
        var closed = false
        var i = open + 1
        func finish(_ end: Int) throws {
            guard elementStart >= 0 else { return }
            var lo = elementStart
            var hi = end
            while lo < hi, isSpace(b[lo]) { lo += 1 }
            while hi > lo, isSpace(b[hi - 1]) { hi -= 1 }
            index += 1
            if hi - lo > limits.maxLineBytes {
                rejected.append(LineError(line: index, error: "element is longer than the limit maxLineBytes=\(limits.maxLineBytes)"))
            } else if hi > lo {
                elements.append(Element(line: index, range: lo..<hi))
            } else {
                rejected.append(LineError(line: index, error: "empty array element"))
            }
            if elements.count + rejected.count > limits.maxRecordsPerRequest {
                throw RequestLimitError.tooManyRecords(
                    limit: limits.maxRecordsPerRequest, held: nil, advice: RequestLimitError.splitAdvice)
            }
            elementStart = -1
        }
        while i < b.count {
            let c = b[i]
            if inString {
                if escaped { escaped = false } else if c == 0x5C { escaped = true } else if c == 0x22 { inString = false }
            } else if c == 0x22 {
                inString = true
                if elementStart < 0 { elementStart = i }
            } else if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                if elementStart < 0 { elementStart = i }
                depth += 1
            } else if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                if depth == 0 {
                    guard c == UInt8(ascii: "]") else { break }
                    try finish(i)
                    closed = true
                    i += 1
                    break
                }
                depth -= 1
            } else if c == UInt8(ascii: ","), depth == 0 {
                try finish(i)
            } else if !isSpace(c), elementStart < 0 {
                elementStart = i
            }
            i += 1
        }
        while i < b.count, isSpace(b[i]) { i += 1 }
        guard closed, i == b.count else {
            return ([], [LineError(line: 1, error: "body starts a JSON array that is not closed or has trailing data")])
        }
        return (elements, rejected)
    }

    @inline(__always) static func isSpace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A
    }
}
