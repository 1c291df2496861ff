import TelemetryModel

/// The rules of `RecordVisibility` applied to bytes: replaces personal values in stored JSON
/// records and free text with stable keyed pseudonyms (`user-…`, `oid-…`, `token-…`) and
/// withholds verbose-level text (`WithheldText`), so one user's records still line up across
/// files and bundles while the raw values never leave the daemon. A single linear byte pass
/// over each record (no regex, no JSON re-encoding): JSON string tokens are found, values
/// are rewritten in place of their raw bytes, and the member names are used as context
/// (`identity`, `accountId`, ...). Stored records were validated and compacted at ingest,
/// which is what lets this pass skip validation.
///
/// The same pass optionally captures scalar values of chosen members (after redaction), so
/// the timeline and summary need not parse each record a second time.
public struct RecordRedactor: Sendable {
    public let pseudonymizer: Pseudonymizer
    public let enabled: Bool
    public private(set) var counts = RedactionCounts()
    /// The same users recur in every record of a page: pseudonyms are computed once per
    /// request (the cache is the caller's `RecordVisibility`'s), not once per record.
    private let cache: PseudonymCache

    public init(pseudonymizer: Pseudonymizer, enabled: Bool, cache: PseudonymCache = PseudonymCache()) {
        self.pseudonymizer = pseudonymizer
        self.enabled = enabled
        self.cache = cache
    }

    /// Members holding a UPN / user name as their whole value.
    static let identityKeys: Set<String> = [
        "identity", "upn", "userprincipalname", "username", "email", "mail", "loginhint", "user",
    ]
    /// Members holding an Entra object id (replaced when the value is a GUID).
    static let objectIDKeys: Set<String> = [
        "accountid", "oid", "objectid", "userobjectid", "aadobjectid", "entraobjectid", "userid", "homeaccountid",
    ]
    /// The members of a verbose record whose text stays visible: where and when it was
    /// logged, never what. Every other string of a verbose record — `message`, and any free
    /// field an app adds — is withheld, so a new field cannot leak what `message` may not.
    static let verboseVisibleKeys: Set<String> = Set(
        [
            "time", "level", "component", "category", "appid", "appversion", "sdkversion", "platform", "deviceid",
            "sessionid", "eventid", "incident", "env", "receivedat", "thread", "tenantid",
        ]
            + (AppFlags.Key.telemetryDisabled + AppFlags.Key.usePPE + AppFlags.Key.verboseLogging).map { $0.lowercased() })

    public mutating func pseudonym(_ value: String, kind: String) -> String {
        cache.value(for: kind + ":" + value.lowercased()) { pseudonymizer.pseudonym(value, kind: kind) }
    }

    /// Member names whose scalar values a walk returns, matched ASCII case-insensitively
    /// against the record's bytes: made once per bundle, not once per record, and a member
    /// name becomes a `String` only when it is one of them.
    public struct CaptureSet: Sendable {
        let names: [(bytes: [UInt8], name: String)]
        /// Bit n set when some name is n bytes long (names of 64 bytes or more never match).
        let lengths: UInt64

        /// `names` lower-cased.
        public init(_ names: Set<String>) {
            self.names = names.map { (Array($0.lowercased().utf8), $0.lowercased()) }
            lengths = self.names.reduce(0) { $1.bytes.count < 64 ? $0 | 1 << UInt64($1.bytes.count) : $0 }
        }

        /// The lower-cased name `key` matches, if any.
        @inline(__always)
        func match(_ key: UnsafeBufferPointer<UInt8>) -> String? {
            guard key.count < 64, lengths & (1 << UInt64(key.count)) != 0 else { return nil }
            outer: for candidate in names where candidate.bytes.count == key.count {
                for i in 0..<key.count {
                    let c = key[i]
                    if (c >= 65 && c <= 90 ? c + 32 : c) != candidate.bytes[i] { continue outer }
                }
                return candidate.name
            }
            return nil
        }

        static let none = CaptureSet([])
    }

    /// Rewrites one stored JSON record; `verbose` is whether the record is a verbose-level
    /// log record (its text is withheld). `capture` names (lower-cased) members whose scalar
    /// values are returned, last occurrence wins. Works on a raw buffer pointer: this runs
    /// once per record of every bundle and query page, and text without an `@`, `eyJ` or
    /// `bearer` is copied as is.
    public mutating func redact(json record: [UInt8], verbose: Bool, capture: Set<String> = []) -> (
        json: [UInt8], captured: [String: String]
    ) {
        let set = capture.isEmpty ? CaptureSet.none : CaptureSet(capture)
        return record.withUnsafeBufferPointer { redact(json: $0, verbose: verbose, capture: set) }
    }

    public mutating func redact(json record: UnsafeBufferPointer<UInt8>, verbose: Bool, capture: CaptureSet) -> (
        json: [UInt8], captured: [String: String]
    ) {
        var out: [UInt8] = []
        out.reserveCapacity(record.count + 32)
        let withheldBefore = counts.textWithheld
        let captured = walk(record, verbose: verbose, capture: capture, into: &out)
        if counts.textWithheld > withheldBefore { counts.verboseMessagesScrubbed += 1 }
        return (out, captured)
    }

    /// The values `capture` names, read from a record shown as stored (a caller who may see
    /// everything): the same walk as `redact` without writing a copy of the record.
    public mutating func captured(json record: UnsafeBufferPointer<UInt8>, capture: CaptureSet) -> [String: String] {
        var none: [UInt8]? = nil
        return walk(record, verbose: false, capture: capture, into: &none)
    }

    /// One linear pass over a record's tokens: member names give the context, string values
    /// are redacted (when enabled) and written to `out` with everything between them (when
    /// there is an `out`), and captured values are collected. A member name becomes a lower-
    /// cased `String` only when a redaction rule needs it.
    private mutating func walk(
        _ b: UnsafeBufferPointer<UInt8>, verbose: Bool, capture: CaptureSet, into out: inout some BytesSink
    ) -> [String: String] {
        var captured: [String: String] = [:]
        var keyStart = 0
        var keyEnd = 0
        var lastKey: String?
        /// The capture name the current member matches, decided once per member.
        var capturing: String?
        func key() -> String {
            if let lastKey { return lastKey }
            let k = String(decoding: UnsafeBufferPointer(rebasing: b[keyStart..<keyEnd]), as: UTF8.self).lowercased()
            lastKey = k
            return k
        }
        var i = 0
        let n = b.count
        while i < n {
            let c = b[i]
            if c == 0x22 {
                var j = i + 1
                while j < n, b[j] != 0x22 {
                    j += b[j] == 0x5C ? 2 : 1
                }
                let end = min(j, n)
                var k = end + 1
                while k < n, Self.isSpace(b[k]) { k += 1 }
                if k < n, b[k] == UInt8(ascii: ":") {
                    keyStart = i + 1
                    keyEnd = end
                    lastKey = nil
                    capturing = capture.match(UnsafeBufferPointer(rebasing: b[keyStart..<keyEnd]))
                    out.append(UnsafeBufferPointer(rebasing: b[i..<min(end + 1, n)]))
                } else {
                    let content = UnsafeBufferPointer(rebasing: b[(i + 1)..<end])
                    var value: [UInt8]?
                    if enabled, !content.isEmpty { value = redactValue(content, key: key(), verbose: verbose) }
                    out.append(CollectionOfOne(0x22))
                    if let value { out.append(value) } else { out.append(content) }
                    out.append(CollectionOfOne(0x22))
                    if let capturing {
                        captured[capturing] =
                            value.map { JSONText.unescape(String(decoding: $0, as: UTF8.self)) }
                            ?? JSONText.unescape(String(decoding: content, as: UTF8.self))
                    }
                }
                i = end + 1
            } else if c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "t") || c == UInt8(ascii: "f") {
                var j = i
                while j < n, !Self.isDelimiter(b[j]) { j += 1 }
                let literal = UnsafeBufferPointer(rebasing: b[i..<j])
                if let capturing { captured[capturing] = String(decoding: literal, as: UTF8.self) }
                out.append(literal)
                i = j
            } else {
                out.append(CollectionOfOne(c))
                i += 1
            }
        }
        return captured
    }

    /// The replacement of one JSON string value (raw, still escaped), or nil to keep it.
    private mutating func redactValue(_ content: UnsafeBufferPointer<UInt8>, key: String, verbose: Bool) -> [UInt8]? {
        if Self.identityKeys.contains(key) {
            counts.upn += 1
            return Array(pseudonym(JSONText.unescape(String(decoding: content, as: UTF8.self)), kind: "user").utf8)
        }
        if Self.objectIDKeys.contains(key), Self.isGUID(content) {
            counts.objectId += 1
            return Array(pseudonym(String(decoding: content, as: UTF8.self), kind: "oid").utf8)
        }
        if verbose, !Self.verboseVisibleKeys.contains(key) {
            // A marker holds no character JSON needs escaped.
            return Array(withhold(JSONText.unescape(String(decoding: content, as: UTF8.self))).utf8)
        }
        guard Self.mayHoldSecrets(content) else { return nil }
        return scrub(Array(content)[...])
    }

    /// The marker shown for text this caller may not read (counted).
    public mutating func withhold(_ text: String) -> String {
        counts.textWithheld += 1
        return WithheldText.marker(for: text, pseudonymizer: pseudonymizer)
    }

    /// Free text a user typed (an incident's description): withheld like verbose text.
    public mutating func freeText(_ text: String?) -> String? {
        guard enabled, let text, !text.isEmpty else { return text }
        return withhold(text)
    }

    /// One journal line's message: a mirrored verbose record's is withheld (unless the
    /// mirror already withheld it), any other has e-mails and tokens pseudonymized.
    public mutating func journalMessage(_ text: String, verbose: Bool) -> String {
        guard enabled else { return text }
        if verbose {
            if WithheldText.isMarker(text) {
                counts.textWithheld += 1
                return text
            }
            return withhold(text)
        }
        return scrub(text: text)
    }

    /// A cheap pre-check: could this text hold an email, a bearer token or a JWT?
    static func mayHoldSecrets(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "@"): return true
            case UInt8(ascii: "y"): if i + 1 < b.count, b[i + 1] == UInt8(ascii: "J") { return true }
            case UInt8(ascii: "r"), UInt8(ascii: "R"):
                if i >= 5, b[i - 5] | 0x20 == UInt8(ascii: "b"), b[i - 4] | 0x20 == UInt8(ascii: "e"),
                    b[i - 3] | 0x20 == UInt8(ascii: "a"), b[i - 2] | 0x20 == UInt8(ascii: "r"), b[i - 1] | 0x20 == UInt8(ascii: "e")
                {
                    return true
                }
            default: break
            }
            i += 1
        }
        return false
    }

    /// Scrubs free text (journal lines of the daemon and of non-verbose records): emails,
    /// bearer tokens, JWTs.
    public mutating func scrub(text: String) -> String {
        guard enabled else { return text }
        let bytes = Array(text.utf8)
        guard let rewritten = scrub(bytes[...]) else { return text }
        return String(decoding: rewritten, as: UTF8.self)
    }

    /// Replaces a whole identity value (request parameters, incident metadata).
    public mutating func redactIdentity(_ value: String?) -> String? {
        guard enabled, let value, !value.isEmpty else { return value }
        counts.upn += 1
        return pseudonym(value, kind: "user")
    }

    /// Emails, `Bearer …` and `eyJ…` JWTs inside text; nil when nothing was found.
    private mutating func scrub(_ b: ArraySlice<UInt8>) -> [UInt8]? {
        var replacements: [(Range<Int>, String)] = []
        var i = b.startIndex
        var floor = b.startIndex
        while i < b.endIndex {
            let c = b[i]
            if c == UInt8(ascii: "@") {
                var s = i
                while s > floor, Self.isLocal(b[s - 1]) { s -= 1 }
                var e = i + 1
                while e < b.endIndex, Self.isDomain(b[e]) { e += 1 }
                while e > i + 1, b[e - 1] == UInt8(ascii: ".") || b[e - 1] == UInt8(ascii: "-") { e -= 1 }
                if s < i, b[(i + 1)..<e].contains(UInt8(ascii: ".")) {
                    let value = String(decoding: b[s..<e], as: UTF8.self)
                    replacements.append((s..<e, pseudonym(value, kind: "user")))
                    counts.upn += 1
                    floor = e
                    i = e
                    continue
                }
            } else if c == UInt8(ascii: "B") || c == UInt8(ascii: "b"), i >= floor, Self.hasPrefix(b, at: i, "bearer") {
                var t = i + 6
                while t < b.endIndex, b[t] == 0x20 { t += 1 }
                var e = t
                while e < b.endIndex, Self.isToken(b[e]) { e += 1 }
                if t > i + 6, e - t >= 8 {
                    replacements.append((t..<e, pseudonym(String(decoding: b[t..<e], as: UTF8.self), kind: "token")))
                    counts.token += 1
                    floor = e
                    i = e
                    continue
                }
            } else if c == UInt8(ascii: "e"), i >= floor, i + 3 <= b.endIndex, b[i + 1] == UInt8(ascii: "y"),
                b[i + 2] == UInt8(ascii: "J"), i == b.startIndex || !Self.isToken(b[i - 1])
            {
                var e = i
                var dots = 0
                while e < b.endIndex, Self.isToken(b[e]) {
                    if b[e] == UInt8(ascii: ".") { dots += 1 }
                    e += 1
                }
                if dots >= 2, e - i >= 20 {
                    replacements.append((i..<e, pseudonym(String(decoding: b[i..<e], as: UTF8.self), kind: "token")))
                    counts.token += 1
                    floor = e
                    i = e
                    continue
                }
            }
            i += 1
        }
        guard !replacements.isEmpty else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var at = b.startIndex
        for (range, text) in replacements {
            out.append(contentsOf: b[at..<range.lowerBound])
            out.append(contentsOf: text.utf8)
            at = range.upperBound
        }
        out.append(contentsOf: b[at..<b.endIndex])
        return out
    }

    static func hasPrefix(_ b: ArraySlice<UInt8>, at i: Int, _ word: String) -> Bool {
        var k = i
        for w in word.utf8 {
            guard k < b.endIndex, b[k] | 0x20 == w else { return false }
            k += 1
        }
        return true
    }

    static func isLocal(_ c: UInt8) -> Bool {
        isAlnum(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "%")
            || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
    }

    static func isDomain(_ c: UInt8) -> Bool { isAlnum(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-") }

    static func isToken(_ c: UInt8) -> Bool {
        isAlnum(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ".")
            || c == UInt8(ascii: "~") || c == UInt8(ascii: "+") || c == UInt8(ascii: "/") || c == UInt8(ascii: "=")
    }

    static func isAlnum(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A)
    }

    public static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    static func isDelimiter(_ c: UInt8) -> Bool {
        c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]") || Self.isSpace(c)
    }

    /// 8-4-4-4-12 hex digits.
    static func isGUID(_ b: some Collection<UInt8>) -> Bool {
        guard b.count == 36 else { return false }
        for (offset, c) in b.enumerated() {
            if [8, 13, 18, 23].contains(offset) {
                guard c == UInt8(ascii: "-") else { return false }
            } else {
                let h = c | 0x20
                guard (c >= 0x30 && c <= 0x39) || (h >= 0x61 && h <= 0x66) else { return false }
            }
        }
        return true
    }
}

/// Where the redactor's walk writes a record: an array, or nowhere when only the captured
/// values are wanted.
protocol BytesSink {
    mutating func append(_ bytes: some Collection<UInt8>)
}

extension Array: BytesSink where Element == UInt8 {
    mutating func append(_ bytes: some Collection<UInt8>) { append(contentsOf: bytes) }
}

extension Optional: BytesSink where Wrapped == [UInt8] {
    mutating func append(_ bytes: some Collection<UInt8>) { self?.append(contentsOf: bytes) }
}
