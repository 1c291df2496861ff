/// The one spelling in which the daemon stores every record, whichever route it came by and
/// whoever wrote it (the client, the OTLP mapping, the text-line parser), so that every reader
/// (index, filters, redactor, journal, exports) sees the same characters:
///
/// - no whitespace outside strings;
/// - member names and strings with their escapes resolved and written back minimally: `"` and
///   `\` as `\"` and `\\`; U+0008, U+0009, U+000A, U+000C and U+000D as `\b` `\t` `\n` `\f`
///   `\r`; the other characters below U+0020 as `\u00xx` (lower-case hex); everything else,
///   `/`, DEL and all non-ASCII included, as raw UTF-8 (`JSONWriter.appendString` writes it);
/// - numbers as sent (the RFC 8259 grammar already has no other liberty than the
///   exponent and fraction spelling), and only finite doubles;
/// - no member name twice in one object, no lone surrogate (`\uD800` without its partner).
///
/// Ingest refuses a line that breaks the last two rules (naming the member) and rewrites the
/// rest; the numbers the daemon interprets also have declared ranges (``InterpretedField``).
/// Records stored by versions before this rule are repaired on the way out
/// (``repairing(stored:)``), so a reader never has to cope with what ingest now refuses.
public enum CanonicalJSON {
    /// Why a text has no canonical form, naming the member.
    public struct Refusal: Error, Sendable, Hashable {
        public let reason: String
    }

    /// The canonical form of one JSON text (any value), or why it has none: not JSON, over
    /// `limits`, a duplicate member name, a lone surrogate, a number past a double's range.
    public static func canonicalize(_ bytes: [UInt8], limits: DecodeLimits = .default) -> Result<[UInt8], Refusal> {
        bytes.withUnsafeBufferPointer { b in
            var cursor = JSONRecordScanner.Cursor(b: b, limits: limits, strictness: .record, recordingEdits: true)
            do {
                try cursor.walkOneValue()
            } catch let error as ShapeError {
                return .failure(Refusal(reason: error.message))
            } catch {
                return .failure(Refusal(reason: "not valid JSON"))
            }
            return .success(JSONEdit.apply(cursor.edits ?? [], to: b))
        }
    }

    /// A stored record as readers are to be given it, or nil when it needs nothing (every
    /// record written under the canonical rule, checked by one quick pass). A record an older
    /// version stored may hold what ingest now refuses and JSON readers choke on (Foundation
    /// refuses both): a lone surrogate escape becomes U+FFFD and a number past a double's
    /// range becomes a string of its digits (`"durationMs":"1e400"`: the device's text kept,
    /// readable). Duplicate member names are left as stored.
    public static func repairing(stored bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard mayNeedRepair(bytes) else { return nil }
        var cursor = JSONRecordScanner.Cursor(b: bytes, limits: .walkOnly, strictness: .stored, recordingEdits: true)
        guard (try? cursor.walkOneValue()) != nil, let edits = cursor.edits, !edits.isEmpty else { return nil }
        return JSONEdit.apply(edits, to: bytes)
    }

    /// Whether `b` may hold a surrogate escape or a number that overflows a double: a string
    /// with `\uD…`, or a number with an exponent or over 300 digits. Over-inclusive (a valid
    /// pair, `1e5`), never under: what it passes is readable as stored.
    static func mayNeedRepair(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = b.count
        var digits = 0
        while i < n {
            let c = b[i]
            if c == 0x22 {
                digits = 0
                i += 1
                while true {
                    i = ByteWords.quoteOrBackslash(b, from: i)
                    guard i < n, b[i] == 0x5C else { break }
                    if i + 2 < n, b[i + 1] == UInt8(ascii: "u"), b[i + 2] | 0x20 == UInt8(ascii: "d") { return true }
                    i += 2
                }
                i += 1
                continue
            }
            if c >= 0x30 && c <= 0x39 {
                digits += 1
                if digits > 300 { return true }
            } else {
                if c | 0x20 == UInt8(ascii: "e"), digits > 0 { return true }
                digits = 0
            }
            i += 1
        }
        return false
    }

    /// Whether the escape `\uXXXX` of `v` (its hex digits at `hexAt`) is how the canonical
    /// form writes that character: only controls without a short form, in lower-case hex.
    static func isCanonicalEscape(_ v: UInt32, _ b: UnsafeBufferPointer<UInt8>, hexAt k: Int) -> Bool {
        guard v < 0x20, v != 0x08, v != 0x09, v != 0x0A, v != 0x0C, v != 0x0D else { return false }
        let last = b[k + 3]
        return last < UInt8(ascii: "A") || last > UInt8(ascii: "F")
    }
}

extension JSONRecordScanner.Cursor {
    /// Walks one JSON value from here to the end of the text, whitespace around it allowed.
    mutating func walkOneValue() throws {
        skipSpace()
        _ = try value(capture: false)
        skipSpace()
        guard atEnd else { throw ShapeError.syntax("trailing characters after the value") }
    }
}
