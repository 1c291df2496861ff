/// Appends JSON text to a byte buffer. Used where the daemon builds records itself (text log
/// lines, server fields spliced into stored records) so no Foundation encoder runs per record.
public struct JSONWriter {
    public private(set) var bytes: [UInt8]
    private var needsComma = false

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func key(_ key: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        JSONWriter.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = true
    }

    public mutating func field(_ key: String, _ value: String) {
        self.key(key)
        JSONWriter.appendString(value, to: &bytes)
    }

    public mutating func field(_ key: String, _ value: Int64) {
        self.key(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func field(_ key: String, _ value: Int) { field(key, Int64(value)) }

    public mutating func field(_ key: String, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Writes already-encoded JSON as the value of `key`.
    public mutating func field(_ key: String, rawJSON: some Collection<UInt8>) {
        self.key(key)
        bytes.append(contentsOf: rawJSON)
    }

    /// Appends `s` as a quoted JSON string in the canonical spelling (``CanonicalJSON``).
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        appendString(utf8: s.utf8, to: &out)
    }

    /// Appends UTF-8 bytes as a quoted JSON string in the canonical spelling: only `"`, `\`
    /// and the characters below U+0020 escaped, the five with a short form by it (a stored
    /// record's own bytes can be embedded as a string value without a round trip through
    /// `String`). This is the one writer of the canonical string form.
    public static func appendString(utf8: some Sequence<UInt8>, to out: inout [UInt8]) {
        // Callers in other modules get this generic function unspecialized: iterating `utf8`
        // there cost a protocol call per byte, a quarter of the redactor's instructions per
        // shown record (`scripts/callgrind.sh render`). One dynamic call reaches the bytes.
        if utf8.withContiguousStorageIfAvailable({ appendString(bytes: $0, to: &out) }) != nil { return }
        Array(utf8).withUnsafeBufferPointer { appendString(bytes: $0, to: &out) }
    }

    /// The canonical spelling of `bytes`, copied in runs between the bytes that need escaping.
    private static func appendString(bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(0x22)
        var run = 0
        for i in 0..<bytes.count {
            let c = bytes[i]
            guard c < 0x20 || c == 0x22 || c == 0x5C else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i]))
            appendEscape(c, to: &out)
            run = i + 1
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        out.append(0x22)
    }

    private static func appendEscape(_ c: UInt8, to out: inout [UInt8]) {
        switch c {
        case 0x22: out.append(contentsOf: [0x5C, 0x22])
        case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
        case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
        default:
            let hex = Array("0123456789abcdef".utf8)
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]])
        }
    }

    public static func quoted(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        appendString(s, to: &out)
        return out
    }
}

/// Inserts members at the front of a stored JSON object without re-encoding the rest: the
/// stored bytes stay the client's own, and server fields (`id`, `receivedAt`, ...) are added
/// on the way out.
public enum JSONSplice {
    /// `members` is already-encoded `"k":v` text without braces, e.g. `"id":12`.
    public static func prepend(_ members: [UInt8], to object: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(object.count + members.count + 2)
        var it = object.makeIterator()
        guard let first = it.next(), first == UInt8(ascii: "{") else { return Array(object) }
        out.append(first)
        out.append(contentsOf: members)
        // An empty object `{}` needs no comma after the new members.
        var rest: [UInt8] = []
        while let c = it.next() { rest.append(c) }
        if let next = rest.first(where: { !BodySplitter.isSpace($0) }), next != UInt8(ascii: "}") {
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: rest)
        return out
    }
}
