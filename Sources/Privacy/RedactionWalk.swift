import TelemetryModel

/// One record's walk for `RecordRedactor`: follows the tokens `JSONTokenWalk` reports with a
/// stack of object and array contexts, decides each string, number and member name by the
/// rules below, and writes the record as shown.
///
/// - A member's rule comes from its decoded name (`MemberNames`) and, inside an object or
///   array held by an identity, object-id or credential member, from that member: the
///   stronger one wins. A context ends where its container closes.
/// - In a verbose record only the top-level members `MemberNames.verboseVisible` names keep
///   their text (scrubbed); every other string (nested, in arrays, free fields) is withheld.
/// - Everything else is text: credentials masked, e-mail addresses pseudonymized.
/// - Member names are text too; a name that redaction changed never duplicates another
///   member of its object (a `~2`, `~3`… suffix keeps it apart).
struct RedactionWalk: JSONTokenVisitor {
    var redactor: RecordRedactor
    let verbose: Bool
    let capture: RecordRedactor.CaptureSet
    /// False when only the captured values are wanted.
    let writes: Bool
    var out: [UInt8] = []
    var captured: [String: String] = [:]
    var scratch: Scratch
    /// The rule and capture name the next value gets from its member name.
    var pending: (rule: MemberRule, capture: String?) = (.none, nil)
    var withheldAny = false

    struct Frame {
        var isObject: Bool
        var items = 0
        /// The rule of the member holding this container (only inherited rules).
        var inherited: MemberRule
        /// Where this object's names start in `Scratch.names`.
        var namesStart: Int
        /// Whether a name of this object was rewritten: later names are then checked for duplicates.
        var renamed = false
    }

    /// Stacks reused from record to record.
    struct Scratch: Sendable {
        var frames: [Frame] = []
        /// Where each open object's names were written in the output, for the duplicate check.
        var names: [Range<Int>] = []
    }

    init(redactor: RecordRedactor, verbose: Bool, capture: RecordRedactor.CaptureSet, writes: Bool) {
        self.redactor = redactor
        self.verbose = verbose
        self.capture = capture
        self.writes = writes
        scratch = redactor.scratch
        self.redactor.scratch = Scratch()
    }

    var hides: Bool { redactor.enabled }

    /// Walks `record`; returns what the caller is shown (a record that cannot be walked, which
    /// ingest never stores, is shown as one withheld text).
    mutating func run(_ record: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        scratch.frames.removeAll(keepingCapacity: true)
        scratch.names.removeAll(keepingCapacity: true)
        if writes { out.reserveCapacity(record.count + record.count / 8) }
        do {
            try JSONTokenWalk.walk(record, visitor: &self)
        } catch {
            out.removeAll()
            captured.removeAll()
            var w = JSONWriter()
            w.beginObject()
            w.field("unreadable", redactor.withhold(String(decoding: record, as: UTF8.self)))
            w.endObject()
            out = w.bytes
        }
        if withheldAny { redactor.counts.verboseMessagesScrubbed += 1 }
        redactor.scratch = scratch
        return out
    }

    // MARK: - Structure

    mutating func beginObject() { open(isObject: true, opener: UInt8(ascii: "{")) }
    mutating func beginArray() { open(isObject: false, opener: UInt8(ascii: "[")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(isObject: Bool, opener: UInt8) {
        let (rule, _, _) = beginValue()
        if writes { out.append(opener) }
        scratch.frames.append(
            Frame(isObject: isObject, inherited: rule.isInherited ? rule : .none, namesStart: scratch.names.count))
    }

    private mutating func close(_ closer: UInt8) {
        if let frame = scratch.frames.popLast(), frame.isObject {
            scratch.names.removeSubrange(frame.namesStart...)
        }
        if writes { out.append(closer) }
    }

    /// The rule of the value about to be written (and whether its text is withheld as
    /// verbose), its capture name; writes the comma an array element needs.
    private mutating func beginValue() -> (rule: MemberRule, withheld: Bool, capture: String?) {
        guard let top = scratch.frames.indices.last else { return (.none, false, nil) }
        let frame = scratch.frames[top]
        if frame.isObject {
            let (named, capturing) = pending
            pending = (.none, nil)
            let rule = max(frame.inherited, named == .verboseVisible ? .none : named)
            // Only a top-level member can be allow-listed; nested ones are anybody's text.
            let visible = named == .verboseVisible && top == 0
            return (rule, verbose && !visible, capturing)
        }
        if writes, frame.items > 0 { out.append(UInt8(ascii: ",")) }
        scratch.frames[top].items += 1
        return (frame.inherited, verbose, nil)
    }

    mutating func name(_ decoded: String) {
        var decoded = decoded
        decoded.withUTF8 { name(text: $0, asWritten: false) }
    }

    /// Only a name holding an escape is decoded; any other is its own text, and is written
    /// back as it stands (minimal escaping would write the same bytes).
    mutating func name(raw: UnsafeBufferPointer<UInt8>, escaped: Bool) {
        guard escaped else { return name(text: raw, asWritten: true) }
        var decoded = JSONText.unescape(String(decoding: raw, as: UTF8.self))
        decoded.withUTF8 { name(text: $0, asWritten: false) }
    }

    /// A member name's decoded text: its rule, its capture name, and (when writing) the name
    /// as shown. `asWritten`: the text needs no escaping.
    private mutating func name(text: UnsafeBufferPointer<UInt8>, asWritten: Bool) {
        guard let top = scratch.frames.indices.last else { return }
        if writes, scratch.frames[top].items > 0 { out.append(UInt8(ascii: ",")) }
        scratch.frames[top].items += 1
        pending = (MemberNames.rule(utf8: text), capture.isEmpty ? nil : capture.match(utf8: text))
        guard writes else { return }
        var shown = redactor.rewrite(text)
        if shown != nil { scratch.frames[top].renamed = true }
        if scratch.frames[top].renamed {
            let base = shown ?? Array(text)
            if isEarlierName(base, in: top) {
                var n = 2
                while isEarlierName(base + Array("~\(n)".utf8), in: top) { n += 1 }
                shown = base + Array("~\(n)".utf8)
            }
        }
        let start = out.count
        if let shown {
            JSONWriter.appendString(utf8: shown, to: &out)
        } else if asWritten {
            out.append(0x22)
            out.append(contentsOf: text)
            out.append(0x22)
        } else {
            JSONWriter.appendString(utf8: text, to: &out)
        }
        scratch.names.append(start..<out.count)
        out.append(UInt8(ascii: ":"))
    }

    /// Whether an earlier name of the object at `top` is shown as `text`: names are compared
    /// as written to the output (quoted, minimally escaped: one spelling per text).
    private func isEarlierName(_ text: [UInt8], in top: Int) -> Bool {
        var quoted: [UInt8] = []
        JSONWriter.appendString(utf8: text, to: &quoted)
        return scratch.names[scratch.frames[top].namesStart...].contains { out[$0].elementsEqual(quoted) }
    }

    // MARK: - Scalars

    mutating func string(_ raw: UnsafeBufferPointer<UInt8>) {
        let (rule, withheld, capturing) = beginValue()
        guard let shown = shownString(raw, rule: rule, withheld: withheld) else {
            if writes {
                out.append(0x22)
                out.append(contentsOf: raw)
                out.append(0x22)
            }
            if let capturing { captured[capturing] = JSONText.unescape(String(decoding: raw, as: UTF8.self)) }
            return
        }
        if writes { JSONWriter.appendString(utf8: shown, to: &out) }
        if let capturing { captured[capturing] = String(decoding: shown, as: UTF8.self) }
    }

    mutating func number(_ raw: UnsafeBufferPointer<UInt8>) {
        let (rule, _, capturing) = beginValue()
        var replacement: String?
        if rule == .credential {
            redactor.counts.token += 1
            replacement = redactor.pseudonym(String(decoding: raw, as: UTF8.self), kind: "token")
        } else if rule == .identity, hides {
            redactor.counts.upn += 1
            replacement = redactor.pseudonym(String(decoding: raw, as: UTF8.self), kind: "user")
        }
        if let replacement {
            if writes { JSONWriter.appendString(replacement, to: &out) }
            if let capturing { captured[capturing] = replacement }
        } else {
            if writes { out.append(contentsOf: raw) }
            if let capturing { captured[capturing] = String(decoding: raw, as: UTF8.self) }
        }
    }

    mutating func literal(_ raw: UnsafeBufferPointer<UInt8>) {
        let (_, _, capturing) = beginValue()
        if writes { out.append(contentsOf: raw) }
        if let capturing { captured[capturing] = String(decoding: raw, as: UTF8.self) }
    }

    /// A string value as shown (decoded text, to be written with minimal escaping), or nil
    /// when its raw bytes are shown as they are.
    private mutating func shownString(_ raw: UnsafeBufferPointer<UInt8>, rule: MemberRule, withheld: Bool) -> [UInt8]? {
        guard !raw.isEmpty else { return nil }
        let findings = TextScreen.screen(raw)
        let needsText = rule == .credential || (hides && (rule >= .objectID || withheld)) || !findings.isEmpty
        guard needsText else { return nil }
        // An object id that is no GUID, in text without escapes or findings, is shown as stored.
        if rule == .objectID, !withheld, findings.isEmpty, !RecordRedactor.isGUID(raw) { return nil }
        let text =
            findings.contains(.escape) ? JSONText.unescape(String(decoding: raw, as: UTF8.self)) : String(decoding: raw, as: UTF8.self)
        switch rule {
        case .credential:
            var marker = text
            guard !marker.withUTF8(CredentialDetector.isMarker) else { return Array(text.utf8) }
            redactor.counts.token += 1
            return Array(redactor.pseudonym(text, kind: "token").utf8)
        case .identity where hides:
            redactor.counts.upn += 1
            return Array(redactor.pseudonym(text, kind: "user").utf8)
        case .objectID where hides && RecordRedactor.isGUID(text):
            redactor.counts.objectId += 1
            return Array(redactor.pseudonym(text, kind: "oid").utf8)
        default: break
        }
        if hides, withheld {
            withheldAny = true
            return Array(redactor.withhold(text).utf8)
        }
        var bytes = text
        if let rewritten = bytes.withUTF8({ redactor.rewrite($0) }) { return rewritten }
        return findings.contains(.escape) ? Array(text.utf8) : nil
    }
}
