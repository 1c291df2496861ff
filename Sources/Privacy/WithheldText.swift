/// How text a caller may not read is shown: `[withheld: 57 chars, text-3f9a…]` — its length
/// and a keyed digest (`Pseudonymizer.textDigest`), never the text. Used for verbose-level
/// log text (which may hold names, tokens, anything the app logged) and incident
/// descriptions (free text a user typed), wherever a caller without the `pii` scope sees
/// stored data: query answers, follow streams, incident views, bundles and, by default, the
/// journal mirror. Equal texts give equal markers, so repetitions still line up.
public enum WithheldText {
    /// The marker shown in place of `text`.
    public static func marker(for text: String, pseudonymizer: Pseudonymizer) -> String {
        "[withheld: \(text.count) chars, \(pseudonymizer.textDigest(text))]"
    }

    /// Whether `text` is exactly a marker (as the journal holds a verbose message the mirror
    /// already withheld): such text is shown as it is rather than withheld a second time.
    /// `[withheld: ` digits ` chars, text-` 24 lower-case hex digits `]`, checked on bytes:
    /// the journal mirror asks for every verbose record, and a regex literal is parsed again
    /// at each evaluation (it took a fifth of the daemon's CPU under ingest).
    public static func isMarker(_ text: String) -> Bool {
        var text = text
        return text.withUTF8(isMarker(bytes:))
    }

    static func isMarker(bytes b: UnsafeBufferPointer<UInt8>) -> Bool {
        let head: StaticString = "[withheld: "
        let middle: StaticString = " chars, text-"
        guard matches(b, at: 0, head) else { return false }
        var i = head.utf8CodeUnitCount
        let digits = i
        while i < b.count, TextBytes.isDigit(b[i]) { i += 1 }
        guard i > digits, b.count == i + middle.utf8CodeUnitCount + 24 + 1, matches(b, at: i, middle) else { return false }
        i += middle.utf8CodeUnitCount
        let hex = UnsafeBufferPointer(rebasing: b[i..<(i + 24)])
        return hex.allSatisfy { TextBytes.isDigit($0) || ($0 >= 0x61 && $0 <= 0x66) } && b[i + 24] == UInt8(ascii: "]")
    }

    private static func matches(_ b: UnsafeBufferPointer<UInt8>, at i: Int, _ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard i + n <= b.count else { return false }
        return UnsafeBufferPointer(rebasing: b[i..<(i + n)]).elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: n))
    }
}
