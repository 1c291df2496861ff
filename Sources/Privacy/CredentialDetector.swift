import Foundation

/// The one place that knows what a credential looks like, in free text and in member names.
/// A credential is masked for every caller, `pii` included: it is not personal data a
/// support engineer needs, and whoever reads it can act as the user.
///
/// In text it finds, after decoding (JSON escapes are resolved before this runs):
/// - `Bearer <token>` with any separator an HTTP header or a URL gives it (space, TAB,
///   `%20`, `+`), when the token looks opaque (a digit, an upper-case letter or a token
///   punctuation mark in it: `Bearer authentication failed` is prose);
/// - `Basic <base64>` when the base64 decodes to `user:password`;
/// - JSON Web Tokens (`eyJ…` with at least two dots), wherever they stand;
/// - Entra refresh tokens and codes (`0.A…`, at least 40 characters);
/// - the value of a key named like a credential (`access_token=`, `refresh_token: `,
///   `"id_token":"…"`, `client_secret%3D`, `password=`, any `…_token`/`…Token`), up to the
///   next delimiter.
/// Markers the redactor wrote itself (`token-…`, `user-…`) are left as they are, so text
/// redacted twice (a journal line read back into a bundle) keeps the first pseudonyms.
enum CredentialDetector {
    /// Spans of `t` that are credentials, in order and not overlapping.
    static func spans(in t: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var found: [Range<Int>] = []
        var i = 0
        let n = t.count
        while i < n {
            let c = t[i]
            let wordStart = i == 0 || !TextBytes.isAlnum(t[i - 1])
            var span: Range<Int>?
            switch c {
            case UInt8(ascii: "b"), UInt8(ascii: "B"):
                if wordStart { span = scheme(t, at: i) }
            case UInt8(ascii: "e"):
                if i == 0 || !isTokenByte(t[i - 1]) { span = jwt(t, at: i) }
            case UInt8(ascii: "0"):
                if wordStart { span = entraToken(t, at: i) }
            case UInt8(ascii: "="), UInt8(ascii: ":"):
                span = keyedValue(t, separator: i, length: 1)
            case UInt8(ascii: "%"):
                if i + 2 < n, t[i + 1] == UInt8(ascii: "3"), t[i + 2] | 0x20 == UInt8(ascii: "d") || t[i + 2] | 0x20 == UInt8(ascii: "a") {
                    span = keyedValue(t, separator: i, length: 3)
                }
            default: break
            }
            if let span, !span.isEmpty, !isMarker(UnsafeBufferPointer(rebasing: t[span])) {
                found.append(span)
                i = span.upperBound
            } else {
                i += 1
            }
        }
        return found
    }

    /// Whether a member named `name` holds a credential as its whole value.
    static func isCredentialName(_ name: String) -> Bool {
        var lowered: [UInt8] = []
        lowered.reserveCapacity(name.utf8.count)
        for c in name.utf8 { lowered.append(TextBytes.lower(c)) }
        return lowered.withUnsafeBufferPointer(isCredentialKey)
    }

    // MARK: - The forms

    /// `Bearer <token>` or `Basic <base64 of user:password>` at `i`: the token's span.
    static func scheme(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> Range<Int>? {
        let bearer = TextBytes.hasWord(t, at: i, "bearer")
        guard bearer || TextBytes.hasWord(t, at: i, "basic") else { return nil }
        let start = skipSeparators(t, from: i + (bearer ? 6 : 5))
        guard start > i + (bearer ? 6 : 5) else { return nil }
        var end = start
        while end < t.count, isTokenByte(t[end]) { end += 1 }
        guard end - start >= 8 else { return nil }
        let token = UnsafeBufferPointer(rebasing: t[start..<end])
        return (bearer ? looksOpaque(token) : isBasicCredential(token)) ? start..<end : nil
    }

    /// A JSON Web Token (or JWE) starting at `i`: `eyJ`, base64url, at least two dots.
    static func jwt(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> Range<Int>? {
        guard i + 2 < t.count, t[i + 1] == UInt8(ascii: "y"), t[i + 2] == UInt8(ascii: "J") else { return nil }
        var end = i
        var dots = 0
        while end < t.count,
            TextBytes.isAlnum(t[end]) || t[end] == UInt8(ascii: "-") || t[end] == UInt8(ascii: "_") || t[end] == UInt8(ascii: ".")
        {
            if t[end] == UInt8(ascii: ".") { dots += 1 }
            end += 1
        }
        return dots >= 2 && end - i >= 20 ? i..<end : nil
    }

    /// An Entra refresh token or authorization code: `0.A` and a long base64url run.
    static func entraToken(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> Range<Int>? {
        guard i + 2 < t.count, t[i + 1] == UInt8(ascii: "."), t[i + 2] == UInt8(ascii: "A") else { return nil }
        var end = i
        while end < t.count, isTokenByte(t[end]) { end += 1 }
        return end - i >= 40 ? i..<end : nil
    }

    /// The value after a separator (`=`, `:`, `%3D`, `%3A`) at `separator` whose key, read
    /// backwards (past a closing quote and spaces), names a credential.
    static func keyedValue(_ t: UnsafeBufferPointer<UInt8>, separator: Int, length: Int) -> Range<Int>? {
        var k = separator
        while k > 0, t[k - 1] == 0x20 || t[k - 1] == 0x09 { k -= 1 }
        if k > 0, t[k - 1] == UInt8(ascii: "\"") || t[k - 1] == UInt8(ascii: "'") { k -= 1 }
        let keyEnd = k
        while k > 0, keyEnd - k < 64,
            TextBytes.isAlnum(t[k - 1]) || t[k - 1] == UInt8(ascii: "_") || t[k - 1] == UInt8(ascii: "-") || t[k - 1] == UInt8(ascii: ".")
        {
            k -= 1
        }
        guard k < keyEnd else { return nil }
        let key = UnsafeBufferPointer(rebasing: t[k..<keyEnd]).map(TextBytes.lower)
        guard key.withUnsafeBufferPointer(isCredentialKey) else { return nil }
        var start = separator + length
        while start < t.count, t[start] == 0x20 || t[start] == 0x09 { start += 1 }
        if start < t.count, t[start] == UInt8(ascii: "\"") || t[start] == UInt8(ascii: "'") { start += 1 }
        // `Authorization: Bearer …`: the scheme stays readable, whatever follows it is masked.
        for scheme: StaticString in ["bearer", "basic"] where TextBytes.hasWord(t, at: start, scheme) {
            let token = skipSeparators(t, from: start + scheme.utf8CodeUnitCount)
            guard token > start + scheme.utf8CodeUnitCount else { break }
            var end = token
            while end < t.count, isTokenByte(t[end]) { end += 1 }
            return token..<end
        }
        var end = start
        while end < t.count, !isValueDelimiter(t[end]) { end += 1 }
        let value = UnsafeBufferPointer(rebasing: t[start..<end])
        for word in ["null", "true", "false"] where value.elementsEqual(word.utf8) { return nil }
        return start..<end
    }

    // MARK: - Classes

    /// A key (lower-case) that names a credential: it ends in one of the words below, as
    /// `access_token`, `accessToken`, `client_secret`, `x-api-key` do. Each word has its
    /// trigger in `TextScreen`.
    static func isCredentialKey(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        // Most keys end in a byte no suffix ends in, and are settled by one table look-up.
        guard let last = key.last, credentialKeyLastBytes[Int(last)] else { return false }
        for suffix in credentialKeySuffixes where key.count >= suffix.count {
            if TextBytes.same(UnsafeBufferPointer(rebasing: key[(key.count - suffix.count)...]), suffix) { return true }
        }
        return false
    }

    static let credentialKeySuffixes: [[UInt8]] = [
        "token", "secret", "password", "passwd", "apikey", "api_key", "api-key", "api.key", "authorization",
    ].map {
        Array($0.utf8)
    }

    /// By byte value: whether some suffix above ends in it.
    static let credentialKeyLastBytes: [Bool] = (0...255).map { byte in credentialKeySuffixes.contains { $0.last == UInt8(byte) } }

    /// Space, TAB, `+` and `%20` between a scheme and its token.
    static func skipSeparators(_ t: UnsafeBufferPointer<UInt8>, from i: Int) -> Int {
        var j = i
        while j < t.count {
            if t[j] == 0x20 || t[j] == 0x09 || t[j] == UInt8(ascii: "+") {
                j += 1
            } else if t[j] == UInt8(ascii: "%"), j + 2 < t.count, t[j + 1] == UInt8(ascii: "2"), t[j + 2] == UInt8(ascii: "0") {
                j += 3
            } else {
                break
            }
        }
        return j
    }

    /// Characters of an opaque token (RFC 6750's b64token and URL-safe base64).
    static func isTokenByte(_ c: UInt8) -> Bool {
        TextBytes.isAlnum(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ".")
            || c == UInt8(ascii: "~") || c == UInt8(ascii: "+") || c == UInt8(ascii: "/") || c == UInt8(ascii: "=")
    }

    static func isValueDelimiter(_ c: UInt8) -> Bool {
        TextBytes.isSpace(c) || c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") || c == UInt8(ascii: "&")
            || c == UInt8(ascii: ",") || c == UInt8(ascii: ";") || c == UInt8(ascii: ")") || c == UInt8(ascii: "]")
            || c == UInt8(ascii: "}") || c == UInt8(ascii: "<") || c == UInt8(ascii: ">")
    }

    /// A token with a digit, an upper-case letter or token punctuation: not a word of prose.
    static func looksOpaque(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        token.contains { TextBytes.isDigit($0) || TextBytes.isUpper($0) || (!TextBytes.isAlnum($0)) }
    }

    /// Base64 (standard alphabet, padded) of text with a colon: `user:password`.
    static func isBasicCredential(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        guard token.count % 4 == 0, let decoded = Data(base64Encoded: Data(token)) else { return false }
        return decoded.contains(UInt8(ascii: ":"))
    }

    /// A pseudonym or mask this redactor wrote: `token-`/`user-`/`oid-`/`text-` and 24 hex digits.
    static func isMarker(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count >= 28, let dash = b.firstIndex(of: UInt8(ascii: "-")), b.count - dash - 1 == 24 else { return false }
        let kind = UnsafeBufferPointer(rebasing: b[..<dash])
        guard ["token", "user", "oid", "text"].contains(where: { kind.elementsEqual($0.utf8) }) else { return false }
        return b[(dash + 1)...].allSatisfy { TextBytes.isDigit($0) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
