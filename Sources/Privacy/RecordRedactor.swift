public import TelemetryModel

/// The rules of `RecordVisibility` applied to stored records and to text: for a caller without
/// the `pii` scope (`enabled`), personal values become stable keyed pseudonyms (`user-…`,
/// `oid-…`) and verbose-level text is withheld (`WithheldText`), so one user's records still
/// line up across files and bundles while the raw values never leave the daemon; for every
/// caller, `pii` included, credentials become a keyed mask (`token-…`, `CredentialDetector`).
///
/// A record is walked as JSON structure (`JSONTokenWalk`, the ingest tokenizer), with a stack
/// of object and array contexts: a rule is decided on decoded member names and decoded values,
/// so no escape spelling sidesteps it; it covers member names as well as values; a member's
/// rule reaches into the object or array it holds and ends where that closes. The output is
/// always valid JSON, every rewritten string written with minimal escaping.
///
/// The same walk optionally captures scalar values of chosen members (as shown), so the
/// timeline and summary need not parse each record a second time.
public struct RecordRedactor: Sendable {
    public let pseudonymizer: Pseudonymizer
    /// Whether personal data is hidden (a caller without `pii`). Credentials are masked either way.
    public let enabled: Bool
    public internal(set) var counts = RedactionCounts()
    /// The same users recur in every record of a page: pseudonyms are computed once per
    /// request (the cache is the caller's `RecordVisibility`'s), not once per record.
    private let cache: PseudonymCache
    /// The walk's stacks, kept between records so a record's walk allocates only its output.
    var scratch = RedactionWalk.Scratch()
    /// The last pseudonym made: a page or bundle shows one user record after record, and this
    /// spares the shared cache's lookup (a key string and a lock) for the repeats.
    private var recent: (kind: String, value: String, pseudonym: String)?

    public init(pseudonymizer: Pseudonymizer, enabled: Bool, cache: PseudonymCache = PseudonymCache()) {
        self.pseudonymizer = pseudonymizer
        self.enabled = enabled
        self.cache = cache
    }

    public mutating func pseudonym(_ value: String, kind: String) -> String {
        if let recent, recent.value == value, recent.kind == kind { return recent.pseudonym }
        let message = kind + ":" + value.lowercased()
        let made = cache.value(for: message) { pseudonymizer.pseudonym(message: message, kind: kind) }
        recent = (kind, value, made)
        return made
    }

    /// Member names whose scalar values a walk returns, matched ASCII case-insensitively
    /// against decoded member names: made once per bundle, not once per record.
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
        func match(utf8 key: UnsafeBufferPointer<UInt8>) -> String? {
            guard !names.isEmpty else { return nil }
            let n = key.count
            guard n < 64, lengths & (1 << UInt64(n)) != 0 else { return nil }
            outer: for candidate in names where candidate.bytes.count == n {
                for (c, expected) in zip(key, candidate.bytes) where TextBytes.lower(c) != expected { continue outer }
                return candidate.name
            }
            return nil
        }

        var isEmpty: Bool { names.isEmpty }

        static let none = CaptureSet([])
    }

    /// One stored JSON record as shown; `verbose` is whether it is a verbose-level log record
    /// (its text is withheld). `capture` names (lower-cased) members whose scalar values are
    /// returned as shown, last occurrence wins.
    public mutating func redact(json record: [UInt8], verbose: Bool, capture: Set<String> = []) -> (
        json: [UInt8], captured: [String: String]
    ) {
        let set = capture.isEmpty ? CaptureSet.none : CaptureSet(capture)
        return record.withUnsafeBufferPointer { raw in
            let shown = redact(json: raw, verbose: verbose, capture: set)
            return (shown.json ?? Array(raw), shown.captured)
        }
    }

    /// As above on borrowed bytes; `json` is nil when the record is shown exactly as stored
    /// (a `pii` caller's record holding nothing that looks like a credential: found by one
    /// quick look at the bytes, without walking the record).
    public mutating func redact(json record: UnsafeBufferPointer<UInt8>, verbose: Bool, capture: CaptureSet) -> (
        json: [UInt8]?, captured: [String: String]
    ) {
        if !enabled {
            let findings = TextScreen.screen(record)
            if !findings.contains(.credential) && !findings.contains(.unicodeEscape) {
                guard !capture.isEmpty else { return (nil, [:]) }
                var walk = RedactionWalk(redactor: self, verbose: verbose, capture: capture, writes: false)
                _ = walk.run(record)
                self = walk.redactor
                return (nil, walk.captured)
            }
        }
        var walk = RedactionWalk(redactor: self, verbose: verbose, capture: capture, writes: true)
        let json = walk.run(record)
        self = walk.redactor
        return (json, walk.captured)
    }

    /// The marker shown for text this caller may not read (counted).
    public mutating func withhold(_ text: String) -> String {
        counts.textWithheld += 1
        return WithheldText.marker(for: text, pseudonymizer: pseudonymizer)
    }

    /// Free text a user typed (an incident's description): withheld like verbose text;
    /// credentials masked for a caller who may read it.
    public mutating func freeText(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return text }
        return enabled ? withhold(text) : scrub(text: text)
    }

    /// One journal line's message: a mirrored verbose record's is withheld (unless the
    /// mirror already withheld it), any other has e-mails pseudonymized and credentials masked.
    public mutating func journalMessage(_ text: String, verbose: Bool) -> String {
        if enabled, verbose {
            if WithheldText.isMarker(text) {
                counts.textWithheld += 1
                return text
            }
            return withhold(text)
        }
        // A mirrored line already holds the mirror's pseudonyms and masks (they are kept, so
        // they still match the records): the counts are of what the line shows.
        let before = counts
        let shown = scrub(text: text)
        counts = before
        counts.countMarkers(in: shown)
        return shown
    }

    /// Free text as shown (journal lines, client strings in stats and timelines): credentials
    /// masked, e-mail addresses pseudonymized when personal data is hidden.
    public mutating func scrub(text: String) -> String {
        var bytes = text
        guard let rewritten = bytes.withUTF8({ rewrite($0) }) else { return text }
        return String(decoding: rewritten, as: UTF8.self)
    }

    /// Replaces a whole identity value (request parameters, incident metadata).
    public mutating func redactIdentity(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return value }
        guard enabled else { return scrub(text: value) }
        counts.upn += 1
        return pseudonym(value, kind: "user")
    }

    /// A record's index keys as shown: its client strings (app, device, session, name,
    /// detail, incident) scrubbed and its identity pseudonymized. Not counted: the keys repeat
    /// members of the record, counted where the record is written.
    public mutating func shown(_ keys: RecordKeys) -> RecordKeys {
        let before = counts
        defer { counts = before }
        var k = keys
        k.appId = scrub(text: k.appId)
        k.deviceId = scrub(text: k.deviceId)
        k.sessionId = scrub(text: k.sessionId)
        k.name = scrub(text: k.name)
        k.detail = scrub(text: k.detail)
        k.incident = scrub(text: k.incident)
        k.identity = redactIdentity(k.identity) ?? ""
        return k
    }

    /// Whether `text` holds no e-mail address and no credential: whether every caller would
    /// be shown it as it is. For labels shown to anyone (`/metrics`).
    public static func isPlain(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { t in
            let findings = TextScreen.screen(t)
            if findings.contains(.credential), !CredentialDetector.spans(in: t).isEmpty { return false }
            guard findings.contains(.mail) else { return true }
            for i in t.indices where t[i] == UInt8(ascii: "@") || t[i] == UInt8(ascii: "%") {
                if EmailDetector.match(in: t, at: i, floor: 0) != nil { return false }
            }
            return true
        }
    }

    /// Decoded text with its credentials masked and, when personal data is hidden, its e-mail
    /// addresses pseudonymized; nil when nothing needed replacing.
    mutating func rewrite(_ t: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let findings = TextScreen.screen(t)
        let mails = enabled && findings.contains(.mail)
        guard mails || findings.contains(.credential) else { return nil }
        let credentials = findings.contains(.credential) ? CredentialDetector.spans(in: t) : []
        var out: [UInt8] = []
        var at = 0
        func replace(_ range: Range<Int>, with text: String) {
            if out.isEmpty { out.reserveCapacity(t.count + 32) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: t[at..<range.lowerBound]))
            out.append(contentsOf: text.utf8)
            at = range.upperBound
        }
        var next = 0
        var i = 0
        while i < t.count {
            if next < credentials.count, i == credentials[next].lowerBound {
                let span = credentials[next]
                counts.token += 1
                replace(span, with: pseudonym(String(decoding: UnsafeBufferPointer(rebasing: t[span]), as: UTF8.self), kind: "token"))
                next += 1
                i = span.upperBound
                continue
            }
            if mails, t[i] == UInt8(ascii: "@") || t[i] == UInt8(ascii: "%"),
                let mail = EmailDetector.match(in: t, at: i, floor: at),
                next >= credentials.count || mail.range.upperBound <= credentials[next].lowerBound
            {
                counts.upn += 1
                replace(mail.range, with: pseudonym(mail.address, kind: "user"))
                i = mail.range.upperBound
                continue
            }
            i += 1
        }
        guard at > 0 else { return nil }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: t[at...]))
        return out
    }

    /// 8-4-4-4-12 hex digits.
    static func isGUID(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count == 36 else { return false }
        for offset in 0..<36 {
            let c = b[offset]
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard c == UInt8(ascii: "-") else { return false }
            } else {
                let h = c | 0x20
                guard (c >= 0x30 && c <= 0x39) || (h >= 0x61 && h <= 0x66) else { return false }
            }
        }
        return true
    }

    static func isGUID(_ text: String) -> Bool {
        var text = text
        return text.withUTF8(isGUID)
    }
}
