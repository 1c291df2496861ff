/// A JSON value the scanner kept: scalars with their value, containers only by kind.
enum JSONScalar: Equatable {
    case string(String)
    /// The number's text, parsed on demand (most numbers are never looked at).
    case number(String)
    case bool(Bool)
    case null
    case object
    case array
}

/// The members of a record the daemon routes and indexes on, captured in one pass.
struct ScannedRecord {
    /// Wanted top-level members.
    var top: [String: JSONScalar] = [:]
    /// Wanted members of the nested `data` object (when `data` is an object).
    var data: [String: JSONScalar] = [:]
    /// Every scalar member of the nested `settings` object (flag spellings vary).
    var settings: [String: JSONScalar] = [:]
    /// Where whitespace stands outside strings: removed to store the record as one line.
    var layout: [Range<Int>] = []

    var hasLayoutWhitespace: Bool { !layout.isEmpty }
}

/// A strict, single-pass JSON scanner for one record: it validates the whole text (RFC
/// 8259 grammar, UTF-8, escapes), enforces the structural limits (depth, member count,
/// string length) and captures just the members it is asked for — one pass instead of a
/// limits pass plus `JSONDecoder`, which dominated the ingest profile.
struct JSONRecordScanner {
    let limits: DecodeLimits
    let wantedTop: Set<String>
    let wantedData: Set<String>

    func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<ScannedRecord, ShapeError> {
        var cursor = Cursor(b: bytes, limits: limits, recordingLayout: true)
        var record = ScannedRecord()
        // Sized for a typical record up front: growing three dictionaries member by member
        // was several allocations of every record's decode.
        record.top.reserveCapacity(16)
        record.data.reserveCapacity(8)
        do {
            cursor.skipSpace()
            guard cursor.peek == UInt8(ascii: "{") else { return .failure(.notAnObject) }
            try cursor.object { key, cursor in
                let wanted = wantedTop.contains(key)
                if key == "data" || key == "settings", cursor.peek == UInt8(ascii: "{") {
                    record.top[key] = .object
                    let isData = key == "data"
                    try cursor.object { inner, cursor in
                        if isData ? wantedData.contains(inner) : true {
                            let v = try cursor.value(capture: true)
                            if isData { record.data[inner] = v } else { record.settings[inner] = v }
                        } else {
                            _ = try cursor.value(capture: false)
                        }
                    }
                } else {
                    let v = try cursor.value(capture: wanted)
                    if wanted { record.top[key] = v }
                }
            }
            cursor.skipSpace()
            guard cursor.atEnd else { throw ShapeError.syntax("trailing characters after the object") }
        } catch let e as ShapeError {
            return .failure(e)
        } catch {
            return .failure(.syntax("unreadable"))
        }
        record.layout = cursor.layout ?? []
        return .success(record)
    }

    struct Cursor {
        let b: UnsafeBufferPointer<UInt8>
        let limits: DecodeLimits
        var i = 0
        var depth = 0
        var fields = 0
        /// The whitespace runs outside strings, when asked for (nil otherwise).
        var layout: [Range<Int>]?

        init(b: UnsafeBufferPointer<UInt8>, limits: DecodeLimits, recordingLayout: Bool = false) {
            self.b = b
            self.limits = limits
            layout = recordingLayout ? [] : nil
        }

        var atEnd: Bool { i >= b.count }
        var peek: UInt8? { i < b.count ? b[i] : nil }

        mutating func skipSpace() {
            let start = i
            while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
            if i > start { layout?.append(start..<i) }
        }

        mutating func expect(_ c: UInt8, _ what: String) throws {
            skipSpace()
            guard i < b.count, b[i] == c else { throw ShapeError.syntax("expected \(what)") }
            i += 1
        }

        /// Walks an object's members, handing each key to `member`, which must consume the value.
        mutating func object(_ member: (String, inout Cursor) throws -> Void) throws {
            try container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), name: "object") { cursor in
                guard cursor.peek == 0x22 else { throw ShapeError.syntax("expected a member name") }
                let key = try cursor.string()
                cursor.fields += 1
                if cursor.fields > cursor.limits.maxFields { throw ShapeError.tooManyFields(cursor.limits.maxFields) }
                try cursor.expect(UInt8(ascii: ":"), "':'")
                cursor.skipSpace()
                try member(key, &cursor)
            }
        }

        /// Walks an array's elements, handing the cursor to `element` at each, which must
        /// consume it.
        mutating func array(_ element: (inout Cursor) throws -> Void) throws {
            try container(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), name: "array", element)
        }

        /// The grammar both containers share: the opening bracket, items separated by
        /// commas, the closing bracket; one level deeper while inside.
        mutating func container(open: UInt8, close: UInt8, name: String, _ item: (inout Cursor) throws -> Void) throws {
            skipSpace()
            guard peek == open else { throw ShapeError.syntax("expected '\(Character(Unicode.Scalar(open)))'") }
            i += 1
            depth += 1
            if depth > limits.maxDepth { throw ShapeError.tooDeep(limits.maxDepth) }
            skipSpace()
            if peek == close {
                i += 1
                depth -= 1
                return
            }
            while true {
                skipSpace()
                try item(&self)
                skipSpace()
                guard let c = peek else { throw ShapeError.syntax("unterminated \(name)") }
                i += 1
                if c == close { break }
                guard c == UInt8(ascii: ",") else { throw ShapeError.syntax("expected ',' or '\(Character(Unicode.Scalar(close)))'") }
            }
            depth -= 1
        }

        /// A cursor at the same place that walks under `limits` instead: for a member whose
        /// contents are limited on their own (a diagnostic upload's records and text).
        func walking(under limits: DecodeLimits) -> Cursor {
            var c = Cursor(b: b, limits: limits)
            c.i = i
            return c
        }

        mutating func value(capture: Bool) throws -> JSONScalar {
            skipSpace()
            guard let c = peek else { throw ShapeError.syntax("missing value") }
            switch c {
            case 0x22:
                let s = try string(keep: capture)
                return .string(s)
            case UInt8(ascii: "{"):
                try object { _, cursor in _ = try cursor.value(capture: false) }
                return .object
            case UInt8(ascii: "["):
                try array { cursor in _ = try cursor.value(capture: false) }
                return .array
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default:
                return try number(keep: capture)
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let n = word.utf8CodeUnitCount
            guard i + n <= b.count else { throw ShapeError.syntax("invalid literal") }
            let p = word.utf8Start
            for k in 0..<n where b[i + k] != p[k] { throw ShapeError.syntax("invalid literal") }
            i += n
        }

        /// RFC 8259 number grammar; returns its text.
        mutating func number(keep: Bool) throws -> JSONScalar {
            let start = i
            if peek == UInt8(ascii: "-") { i += 1 }
            guard let first = peek, first >= 0x30, first <= 0x39 else { throw ShapeError.syntax("invalid value") }
            i += 1
            if first != 0x30 { while let d = peek, d >= 0x30, d <= 0x39 { i += 1 } }
            if peek == UInt8(ascii: ".") {
                i += 1
                guard let d = peek, d >= 0x30, d <= 0x39 else { throw ShapeError.syntax("invalid number") }
                while let d = peek, d >= 0x30, d <= 0x39 { i += 1 }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                i += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
                guard let d = peek, d >= 0x30, d <= 0x39 else { throw ShapeError.syntax("invalid number") }
                while let d = peek, d >= 0x30, d <= 0x39 { i += 1 }
            }
            return .number(keep ? String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self) : "")
        }

        /// A string token (cursor on the opening quote); validates escapes and UTF-8.
        mutating func string(keep: Bool = true) throws -> String {
            i += 1
            let start = i
            var escaped = false
            var ascii = true
            while true {
                guard i < b.count else { throw ShapeError.syntax("unterminated string") }
                let c = b[i]
                if c == 0x22 { break }
                if c == 0x5C {
                    escaped = true
                    i += 1
                    guard i < b.count else { throw ShapeError.syntax("unterminated string") }
                    switch b[i] {
                    case 0x22, 0x5C, 0x2F, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        i += 1
                    case UInt8(ascii: "u"):
                        guard i + 4 < b.count else { throw ShapeError.syntax("invalid \\u escape") }
                        for k in 1...4 where !Self.isHex(b[i + k]) { throw ShapeError.syntax("invalid \\u escape") }
                        i += 5
                    default:
                        throw ShapeError.syntax("invalid escape")
                    }
                    continue
                }
                if c < 0x20 { throw ShapeError.syntax("control character inside a string") }
                if c >= 0x80 { ascii = false }
                i += 1
            }
            let end = i
            i += 1
            if end - start > limits.maxStringBytes { throw ShapeError.stringTooLong(limits.maxStringBytes) }
            let raw = UnsafeBufferPointer(rebasing: b[start..<end])
            // ASCII is valid UTF-8 as it stands; only text with other bytes needs checking,
            // and a value nobody keeps is checked without being made into a String.
            if ascii {
                guard keep else { return "" }
                let text = String(decoding: raw, as: UTF8.self)
                return escaped ? Self.unescape(text) : text
            }
            guard Self.isValidUTF8(raw) else { throw ShapeError.syntax("invalid UTF-8") }
            guard keep else { return "" }
            let text = String(decoding: raw, as: UTF8.self)
            return escaped ? Self.unescape(text) : text
        }

        /// Whether `bytes` are well-formed UTF-8 (no overlong forms, surrogates or values past
        /// U+10FFFF), without building a String.
        static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var i = 0
            let n = bytes.count
            while i < n {
                let c = bytes[i]
                if c < 0x80 {
                    i += 1
                    continue
                }
                let length: Int
                var low: UInt8 = 0x80
                var high: UInt8 = 0xBF
                switch c {
                case 0xC2...0xDF: length = 2
                case 0xE0:
                    length = 3
                    low = 0xA0
                case 0xE1...0xEC, 0xEE...0xEF: length = 3
                case 0xED:
                    length = 3
                    high = 0x9F
                case 0xF0:
                    length = 4
                    low = 0x90
                case 0xF1...0xF3: length = 4
                case 0xF4:
                    length = 4
                    high = 0x8F
                default: return false
                }
                guard i + length <= n, bytes[i + 1] >= low, bytes[i + 1] <= high else { return false }
                for k in 2..<max(length, 2) where bytes[i + k] < 0x80 || bytes[i + k] > 0xBF { return false }
                i += length
            }
            return true
        }

        static func isHex(_ c: UInt8) -> Bool {
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
        }

        /// Resolves escapes (rare in practice, so the slow path is fine).
        static func unescape(_ s: String) -> String {
            var out = String.UnicodeScalarView()
            var it = s.unicodeScalars.makeIterator()
            var pendingHigh: UInt32?
            while let c = it.next() {
                guard c == "\\", let e = it.next() else {
                    out.append(c)
                    continue
                }
                switch e {
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "b": out.append("\u{08}")
                case "f": out.append("\u{0C}")
                case "u":
                    var v: UInt32 = 0
                    for _ in 0..<4 { v = v * 16 + UInt32(Int(String(it.next() ?? "0"), radix: 16) ?? 0) }
                    if (0xD800...0xDBFF).contains(v) {
                        pendingHigh = v
                        continue
                    }
                    if let high = pendingHigh, (0xDC00...0xDFFF).contains(v) {
                        v = 0x10000 + ((high - 0xD800) << 10) + (v - 0xDC00)
                    }
                    pendingHigh = nil
                    out.append(Unicode.Scalar(v) ?? "\u{FFFD}")
                default: out.append(e)
                }
            }
            return String(out)
        }
    }
}
