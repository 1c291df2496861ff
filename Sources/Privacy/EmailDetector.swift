/// Finds e-mail addresses (and UPNs, which look the same) in decoded text: ASCII and
/// internationalised ones (`jö@müller.de`), and the URL-encoded spelling `jane%40contoso.com`
/// a sign-in URL carries. JSON escapes (`dave\u0040contoso.com`) need no case of their own:
/// the redactor decodes a string before it looks.
enum EmailDetector {
    struct Match {
        /// The bytes the address occupies in the text.
        var range: Range<Int>
        /// The address as one writes it (`%40` as `@`), for its pseudonym: the same user
        /// gets the same pseudonym whichever spelling a record used.
        var address: String
    }

    /// The address whose `@` (or `%40`) stands at `at`, if one does; `floor` is where the
    /// previous match ended (a local part never reaches back into it).
    static func match(in t: UnsafeBufferPointer<UInt8>, at: Int, floor: Int) -> Match? {
        let atLength: Int
        if t[at] == UInt8(ascii: "@") {
            atLength = 1
        } else if t[at] == UInt8(ascii: "%"), at + 2 < t.count, t[at + 1] == UInt8(ascii: "4"), t[at + 2] == UInt8(ascii: "0") {
            atLength = 3
        } else {
            return nil
        }
        var start = at
        while start > floor {
            let c = t[start - 1]
            if c < 0x80 {
                guard isLocal(c) else { break }
                start -= 1
            } else {
                let s = TextBytes.scalarStart(before: start, in: t)
                guard s >= floor, let (scalar, _) = TextBytes.scalar(at: s, in: t), TextBytes.isWordScalar(scalar) else { break }
                start = s
            }
        }
        // An ellipsis or a sentence's dots before the address are not part of it.
        while start < at, t[start] == UInt8(ascii: ".") { start += 1 }
        var end = at + atLength
        while end < t.count {
            let c = t[end]
            if c < 0x80 {
                guard TextBytes.isAlnum(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-") else { break }
                end += 1
            } else {
                guard let (scalar, width) = TextBytes.scalar(at: end, in: t), TextBytes.isWordScalar(scalar) else { break }
                end += width
            }
        }
        while end > at + atLength, t[end - 1] == UInt8(ascii: ".") || t[end - 1] == UInt8(ascii: "-") { end -= 1 }
        let domain = UnsafeBufferPointer(rebasing: t[(at + atLength)..<end])
        guard start < at, let dot = domain.firstIndex(of: UInt8(ascii: ".")), dot > 0 else { return nil }
        let local = String(decoding: UnsafeBufferPointer(rebasing: t[start..<at]), as: UTF8.self)
        return Match(range: start..<end, address: local + "@" + String(decoding: domain, as: UTF8.self))
    }

    /// Characters of an address's local part (RFC 5322's common ones).
    static func isLocal(_ c: UInt8) -> Bool {
        TextBytes.isAlnum(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "%")
            || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || c == UInt8(ascii: "'")
    }
}
