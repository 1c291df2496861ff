import Foundation

/// Character classes the text detectors share, over decoded UTF-8 bytes. Non-ASCII text is
/// judged by Unicode scalar (a letter of any script counts as a letter), so a detector's span
/// never ends inside a multi-byte character.
enum TextBytes {
    /// Whether two byte runs are the same, by `memcmp`. `elementsEqual` between a buffer and
    /// an array walks both through generic iterators a byte at a time; the redactor compares
    /// every member name of every shown record against its tables this way.
    static func same(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Bool {
        b.withUnsafeBufferPointer { b in a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) }
    }

    static func isAlnum(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A)
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    static func isUpper(_ c: UInt8) -> Bool { c >= 0x41 && c <= 0x5A }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    static func lower(_ c: UInt8) -> UInt8 { isUpper(c) ? c | 0x20 : c }

    /// Whether `word` (lower-case ASCII) stands at `i`, ignoring ASCII case.
    static func hasWord(_ t: UnsafeBufferPointer<UInt8>, at i: Int, _ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard i >= 0, i + n <= t.count else { return false }
        let w = word.utf8Start
        for k in 0..<n where lower(t[i + k]) != w[k] { return false }
        return true
    }

    /// The scalar whose encoding starts at `i` and its length in bytes.
    static func scalar(at i: Int, in t: UnsafeBufferPointer<UInt8>) -> (Unicode.Scalar, Int)? {
        var it = UnsafeBufferPointer(rebasing: t[i...]).makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let s) = decoder.decode(&it) else { return nil }
        return (s, UTF8.width(s))
    }

    /// Where the scalar that ends just before `end` starts (stepping back over continuation bytes).
    static func scalarStart(before end: Int, in t: UnsafeBufferPointer<UInt8>) -> Int {
        var s = end - 1
        while s > 0, t[s] & 0xC0 == 0x80, end - s < 4 { s -= 1 }
        return s
    }

    /// A letter, digit or combining mark of any script.
    static func isWordScalar(_ s: Unicode.Scalar) -> Bool {
        if s.properties.isAlphabetic || s.properties.numericType != nil { return true }
        switch s.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
}
