extension JSONRecordScanner {
    /// How much a cursor checks beyond the grammar.
    enum Strictness {
        /// RFC 8259 grammar and UTF-8 only: for walking text whose records are checked one by
        /// one afterwards (an upload's `logs`), or only looked into (the dialect probe).
        case grammar
        /// What ingest accepts: also refuses duplicate member names, lone surrogate escapes and
        /// numbers that are not finite doubles, each naming the member.
        case record
        /// What an older version may have stored: duplicates are kept, a lone surrogate reads
        /// as U+FFFD and a number past a double's range becomes a string of its digits.
        case stored
    }

    /// The one JSON tokenizer: walks a text token by token, handing out member names and
    /// values, within the decode limits. With `recordingEdits` it notes, as it goes, every
    /// difference between the text and its canonical form (``CanonicalJSON``): whitespace
    /// outside strings, strings spelled with escapes the canonical form does not use, and (for
    /// stored text) values it repairs. The common record, escapes only where they are
    /// required, needs no edit and is kept byte for byte.
    struct Cursor {
        let b: UnsafeBufferPointer<UInt8>
        let limits: DecodeLimits
        let strictness: Strictness
        var i = 0
        var depth = 0
        var fields = 0
        /// The rewrites to the canonical form, in input order (nil when not asked for).
        var edits: [JSONEdit]?
        /// The member names of the open objects, outermost first, as they stand in the text:
        /// for the duplicate check and to name the member a refusal is about.
        /// The first `nameCount` entries are in use: the array is a stack reused in place.
        private var names: [Name] = []
        private var nameCount = 0
        private var open: [OpenContainer] = []
        private var readingName = false

        /// A string token's raw contents (between its quotes): kept as a place in the text,
        /// so noting a member name costs no copy and no reference count.
        fileprivate struct NameToken {
            var start: Int
            var end: Int
            var escaped: Bool
        }

        /// A member name with its fingerprint (decoded length and first bytes): names with
        /// different fingerprints differ, so the duplicate check compares integers and only
        /// compares bytes when two fingerprints agree.
        fileprivate struct Name {
            var fingerprint: UInt64
            var token: NameToken
        }

        fileprivate enum OpenContainer {
            /// An object; its member names start at `firstName` in `names`. `seen` has one bit
            /// set per name's fingerprint (6 bits of it): a name whose bit is clear is new, so
            /// most members are checked without looking at the others.
            case object(firstName: Int, seen: UInt64)
            /// An array, at element `index`.
            case array(index: Int)
        }

        init(b: UnsafeBufferPointer<UInt8>, limits: DecodeLimits, strictness: Strictness = .grammar, recordingEdits: Bool = false) {
            self.b = b
            self.limits = limits
            self.strictness = strictness
            edits = recordingEdits ? [] : nil
        }

        /// Storage a cursor can borrow from the one before it, so a body's records do not each
        /// allocate their own name stack.
        struct Scratch {
            fileprivate var names: [Name] = []
            fileprivate var open: [OpenContainer] = []

            init() {
                names.reserveCapacity(32)
                open.reserveCapacity(8)
            }
        }

        /// Takes `scratch`'s storage for this walk; `give(back:)` returns it.
        mutating func borrow(_ scratch: inout Scratch) {
            swap(&names, &scratch.names)
            swap(&open, &scratch.open)
            names.removeAll(keepingCapacity: true)
            open.removeAll(keepingCapacity: true)
            nameCount = 0
        }

        mutating func give(back scratch: inout Scratch) {
            swap(&names, &scratch.names)
            swap(&open, &scratch.open)
        }

        var atEnd: Bool { i >= b.count }
        var peek: UInt8? { i < b.count ? b[i] : nil }

        mutating func skipSpace() {
            let start = i
            while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
            if i > start { edits?.append(JSONEdit(range: start..<i, replacement: [])) }
        }

        @inline(__always)
        mutating func expect(_ c: UInt8, _ what: String) throws {
            skipSpace()
            guard i < b.count, b[i] == c else { throw ShapeError.syntax("expected \(what)") }
            i += 1
        }

        /// Walks an object's members, handing each key to `member`, which must consume the value.
        @inline(__always)
        mutating func object(_ member: (String, inout Cursor) throws -> Void) throws {
            let tracking = strictness != .grammar
            if tracking { open.append(.object(firstName: nameCount, seen: 0)) }
            try container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), name: "object") { cursor in
                guard cursor.peek == 0x22 else { throw ShapeError.syntax("expected a member name") }
                cursor.readingName = true
                let start = cursor.i + 1
                let key = try cursor.string()
                cursor.readingName = false
                cursor.fields += 1
                if cursor.fields > cursor.limits.maxFields { throw ShapeError.tooManyFields(cursor.limits.maxFields) }
                // An escape always makes the text shorter than its spelling.
                if tracking {
                    try cursor.enter(NameToken(start: start, end: cursor.i - 1, escaped: key.utf8.count != cursor.i - 1 - start))
                }
                try cursor.expect(UInt8(ascii: ":"), "':'")
                cursor.skipSpace()
                try member(key, &cursor)
            }
            if tracking, case .object(let first, _)? = open.popLast() { nameCount = first }
        }

        /// Walks an array's elements, handing the cursor to `element` at each, which must
        /// consume it.
        mutating func array(_ element: (inout Cursor) throws -> Void) throws {
            let tracking = strictness != .grammar
            if tracking { open.append(.array(index: -1)) }
            try container(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), name: "array") { cursor in
                if tracking, case .array(let n)? = cursor.open.last { cursor.open[cursor.open.count - 1] = .array(index: n + 1) }
                try element(&cursor)
            }
            if tracking { open.removeLast() }
        }

        /// The grammar both containers share: the opening bracket, items separated by
        /// commas, the closing bracket; one level deeper while inside. `JSONTokenWalk` walks
        /// objects through it too (names as bytes, no duplicate tracking: it reads stored records).
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

        /// Notes a member name of the innermost object; at ingest a name already there is refused.
        /// Names are compared as bytes: two spellings of one name (`"a"`, `"\u0061"`) are one
        /// name, two Unicode normalisations of it are two.
        private mutating func enter(_ key: NameToken) throws {
            let name = Name(fingerprint: strictness == .record ? fingerprint(key) : 0, token: key)
            var clash = false
            if strictness == .record, case .object(let first, let seen)? = open.last {
                // Fibonacci hashing spreads fingerprints that differ only in their low bytes.
                let bit = UInt64(1) << ((name.fingerprint &* 0x9E37_79B9_7F4A_7C15) >> 58)
                if seen & bit != 0 {
                    clash = names.withUnsafeBufferPointer { known in
                        (first..<nameCount).contains {
                            known[$0].fingerprint == name.fingerprint && decoded(known[$0].token) == decoded(key)
                        }
                    }
                }
                open[open.count &- 1] = .object(firstName: first, seen: seen | bit)
            }
            if nameCount < names.count { names[nameCount] = name } else { names.append(name) }
            nameCount += 1
            if clash { throw ShapeError.duplicateMember(path()) }
        }

        /// The decoded length and up to the first seven decoded bytes of a name.
        private func fingerprint(_ key: NameToken) -> UInt64 {
            guard !key.escaped else {
                let text = decoded(key)
                var f = UInt64(truncatingIfNeeded: text.count) << 56
                for k in 0..<min(text.count, 7) { f |= UInt64(text[k]) << UInt64(8 &* k) }
                return f
            }
            let n = key.end - key.start
            var f = UInt64(truncatingIfNeeded: n) << 56
            if key.start + 8 <= b.count, let base = b.baseAddress {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + key.start).loadUnaligned(as: UInt64.self))
                f |= word & (n >= 7 ? 0x00FF_FFFF_FFFF_FFFF : (UInt64(1) << UInt64(8 &* n)) &- 1)
            } else {
                for k in 0..<min(n, 7) { f |= UInt64(b[key.start &+ k]) << UInt64(8 &* k) }
            }
            return f
        }

        private func decoded(_ token: NameToken) -> [UInt8] {
            let raw = UnsafeBufferPointer(rebasing: b[token.start..<token.end])
            return token.escaped ? JSONStringToken.decode(raw) : Array(raw)
        }

        /// The member the cursor is in, as a refusal names it: `data.statusCode`, `args[2].x`.
        func path() -> String {
            var out = ""
            for (level, container) in open.enumerated() {
                switch container {
                case .object(let first, _):
                    var end = nameCount
                    for later in open[(level + 1)...] {
                        if case .object(let next, _) = later {
                            end = next
                            break
                        }
                    }
                    let innermost = level == open.count - 1
                    guard end > first, !(innermost && readingName) else { continue }
                    let name = InterpretedField.clip(String(decoding: decoded(names[end - 1].token), as: UTF8.self))
                    out += out.isEmpty ? name : "." + name
                case .array(let index):
                    out += "[\(max(index, 0))]"
                }
            }
            if readingName { out += out.isEmpty ? "a member name" : " (a member name)" }
            return out.isEmpty ? "record" : out
        }

        /// A cursor at the same place that walks under `limits` instead: for a member whose
        /// contents are limited (and checked) on their own, like a diagnostic upload's records.
        func walking(under limits: DecodeLimits, strictness: Strictness? = nil) -> Cursor {
            var c = Cursor(b: b, limits: limits, strictness: strictness ?? self.strictness)
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

        /// RFC 8259 number grammar; returns its text. A number must also be a finite double:
        /// only one with an exponent or over 309 characters can fail that, so only those are
        /// converted to check.
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
            var exponent = false
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                exponent = true
                i += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
                guard let d = peek, d >= 0x30, d <= 0x39 else { throw ShapeError.syntax("invalid number") }
                while let d = peek, d >= 0x30, d <= 0x39 { i += 1 }
            }
            if strictness != .grammar, exponent || i - start > 309 {
                let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
                if Double(text)?.isFinite != true {
                    guard strictness == .stored else { throw ShapeError.notFinite(path(), text) }
                    edits?.append(JSONEdit(range: start..<i, replacement: JSONWriter.quoted(text)))
                    return .string(text)
                }
            }
            return .number(keep ? String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self) : "")
        }

        /// A string token (cursor on the opening quote): validates escapes and UTF-8, and
        /// notes an edit when the canonical form spells it otherwise.
        mutating func string(keep: Bool = true) throws -> String {
            let quote = i
            i += 1
            let start = i
            var escaped = false
            var rewrite = false
            var nonASCII = false
            while true {
                // Plain text runs are passed over eight bytes at a time.
                i = ByteWords.stringSpecial(b, from: i, nonASCII: &nonASCII)
                guard i < b.count else { throw ShapeError.syntax("unterminated string") }
                let c = b[i]
                if c == 0x22 { break }
                if c == 0x5C {
                    escaped = true
                    i += 1
                    guard i < b.count else { throw ShapeError.syntax("unterminated string") }
                    switch b[i] {
                    case 0x22, 0x5C, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        i += 1
                    case 0x2F:
                        rewrite = true
                        i += 1
                    case UInt8(ascii: "u"):
                        guard let v = JSONStringToken.hex4(b, at: i + 1) else { throw ShapeError.syntax("invalid \\u escape") }
                        if !CanonicalJSON.isCanonicalEscape(v, b, hexAt: i + 1) { rewrite = true }
                        i += 5
                        if (0xD800...0xDFFF).contains(v) { try pairSurrogate(v) }
                    default:
                        throw ShapeError.syntax("invalid escape")
                    }
                    continue
                }
                if c < 0x20 { throw ShapeError.syntax("control character inside a string") }
                if c >= 0x80 { nonASCII = true }
                i += 1
            }
            let end = i
            i += 1
            if end - start > limits.maxStringBytes { throw ShapeError.stringTooLong(limits.maxStringBytes) }
            let raw = UnsafeBufferPointer(rebasing: b[start..<end])
            // ASCII is valid UTF-8 as it stands; only text with other bytes needs checking.
            if nonASCII, !JSONStringToken.isValidUTF8(raw) { throw ShapeError.syntax("invalid UTF-8") }
            if rewrite, edits != nil {
                let text = JSONStringToken.decode(raw)
                var canonical: [UInt8] = []
                canonical.reserveCapacity(text.count + 2)
                JSONWriter.appendString(utf8: text, to: &canonical)
                edits?.append(JSONEdit(range: quote..<i, replacement: canonical))
                return keep ? String(decoding: text, as: UTF8.self) : ""
            }
            // A value nobody keeps is checked without being made into a String.
            guard keep else { return "" }
            return escaped ? String(decoding: JSONStringToken.decode(raw), as: UTF8.self) : String(decoding: raw, as: UTF8.self)
        }

        /// After a surrogate escape `v` (the cursor past it): a high surrogate followed by a
        /// low one is one character; anything else is not Unicode, refused at ingest.
        private mutating func pairSurrogate(_ v: UInt32) throws {
            if v <= 0xDBFF, i + 6 <= b.count, b[i] == 0x5C, b[i + 1] == UInt8(ascii: "u"),
                let low = JSONStringToken.hex4(b, at: i + 2), (0xDC00...0xDFFF).contains(low)
            {
                i += 6
                return
            }
            guard strictness == .record else { return }
            let hex = String(v, radix: 16, uppercase: true)
            throw ShapeError.invalidUnicode(
                path(),
                v <= 0xDBFF
                    ? "\\u\(hex) is a lone surrogate (a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF one)"
                    : "\\u\(hex) is a lone surrogate (a \\uDC00-\\uDFFF escape must follow a \\uD800-\\uDBFF one)")
        }
    }
}
