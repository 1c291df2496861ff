/// What a `JSONTokenWalk` reports, in document order: a reader outside this module (the
/// redactor) follows a record's structure through the same tokenizer that accepted it at
/// ingest, instead of a second JSON grammar of its own.
///
/// Member names arrive as their raw bytes and whether they hold an escape (`name(raw:escaped:)`);
/// a visitor that only implements `name(_:)` gets them decoded (escapes resolved), so a rule
/// keyed on a name cannot be sidestepped by spelling it with escapes. String values arrive as
/// their raw bytes between the quotes (escapes unresolved: most values are copied as they
/// are, and only a reader that needs a value's text pays for decoding it, with `JSONText.unescape`).
public protocol JSONTokenVisitor {
    mutating func beginObject()
    mutating func endObject()
    mutating func beginArray()
    mutating func endArray()
    /// An object member's name, escapes resolved; its value follows.
    mutating func name(_ decoded: String)
    /// An object member's name as written between its quotes (validated), and whether it
    /// holds a backslash (then its text is `JSONText.unescape` of it); its value follows.
    /// By default decoded and handed to `name(_:)`: a visitor that reads every name of
    /// every record implements it to decode only the rare escaped ones.
    mutating func name(raw: UnsafeBufferPointer<UInt8>, escaped: Bool)
    /// A string value's raw contents (without the quotes), validated but still escaped.
    mutating func string(_ raw: UnsafeBufferPointer<UInt8>)
    /// A number as written.
    mutating func number(_ raw: UnsafeBufferPointer<UInt8>)
    /// `true`, `false` or `null` as written.
    mutating func literal(_ raw: UnsafeBufferPointer<UInt8>)
}

extension JSONTokenVisitor {
    public mutating func name(raw: UnsafeBufferPointer<UInt8>, escaped: Bool) {
        let text = String(decoding: raw, as: UTF8.self)
        name(escaped ? JSONText.unescape(text) : text)
    }
}

/// Why a text could not be walked: it is not one JSON value, or nests deeper than allowed.
public struct JSONWalkError: Error, Sendable, Equatable {
    public let message: String
}

/// Walks one JSON value with the ingest scanner's cursor (`JSONRecordScanner.Cursor`), the
/// daemon's one tokenizer: strict RFC 8259 grammar, escapes and UTF-8 validated.
public enum JSONTokenWalk {
    /// Reports every token of `text` (one JSON value with optional surrounding whitespace)
    /// to `visitor`.
    /// - Parameter maxDepth: nesting refused past this depth, so a hostile text cannot
    ///   exhaust the stack; the default is the deepest a stored record may be (the largest
    ///   `limits.maxDepth` the configuration accepts).
    /// - Throws: `JSONWalkError` when `text` is not one JSON value; the visitor has then
    ///   seen the tokens before the fault.
    public static func walk(
        _ text: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512, visitor: inout some JSONTokenVisitor
    ) throws(JSONWalkError) {
        let limits = DecodeLimits(
            maxLineBytes: .max, maxRecordsPerRequest: .max, maxDepth: maxDepth, maxFields: .max, maxStringBytes: .max)
        var cursor = JSONRecordScanner.Cursor(b: text, limits: limits)
        do {
            try cursor.walkValue(&visitor)
            cursor.skipSpace()
            guard cursor.atEnd else { throw ShapeError.syntax("trailing characters after the value") }
        } catch let error as ShapeError {
            throw JSONWalkError(message: error.message)
        } catch {
            throw JSONWalkError(message: "unreadable")
        }
    }
}

extension JSONRecordScanner.Cursor {
    /// One value and everything inside it, reported to `visitor`; containers go through
    /// the cursor's own container grammar (an object's member names are taken as raw
    /// bytes, not decoded into `String`s as `object` does; no field limit applies).
    mutating func walkValue(_ visitor: inout some JSONTokenVisitor) throws {
        skipSpace()
        guard let c = peek else { throw ShapeError.syntax("missing value") }
        let start = i
        switch c {
        case 0x22:
            _ = try string(keep: false)
            visitor.string(UnsafeBufferPointer(rebasing: b[(start + 1)..<(i - 1)]))
        case UInt8(ascii: "{"):
            visitor.beginObject()
            try container(open: c, close: UInt8(ascii: "}"), name: "object") { cursor in
                guard cursor.peek == 0x22 else { throw ShapeError.syntax("expected a member name") }
                let nameStart = cursor.i + 1
                _ = try cursor.string(keep: false)
                let name = UnsafeBufferPointer(rebasing: cursor.b[nameStart..<(cursor.i - 1)])
                try cursor.expect(UInt8(ascii: ":"), "':'")
                cursor.skipSpace()
                visitor.name(raw: name, escaped: name.contains(0x5C))
                try cursor.walkValue(&visitor)
            }
            visitor.endObject()
        case UInt8(ascii: "["):
            visitor.beginArray()
            try array { cursor in try cursor.walkValue(&visitor) }
            visitor.endArray()
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            try literal(c == UInt8(ascii: "t") ? "true" : c == UInt8(ascii: "f") ? "false" : "null")
            visitor.literal(UnsafeBufferPointer(rebasing: b[start..<i]))
        default:
            _ = try number(keep: false)
            visitor.number(UnsafeBufferPointer(rebasing: b[start..<i]))
        }
    }
}
