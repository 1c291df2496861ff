/// The contents of JSON string tokens as bytes: escapes resolved, UTF-8 checked. Shared by the
/// cursor (which validates while it walks) and every reader that holds a string's raw bytes.
enum JSONStringToken {
    /// The UTF-8 text a string token's raw contents (between the quotes) stand for, escapes
    /// resolved. A surrogate escape without its partner, which the ingest cursor refuses and
    /// only a record stored by an older version can hold, becomes U+FFFD.
    static func decode(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        let n = raw.count
        while i < n {
            let c = raw[i]
            guard c == 0x5C, i + 1 < n else {
                out.append(c)
                i += 1
                continue
            }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                guard let v = hex4(raw, at: i) else {
                    appendScalar(0xFFFD, to: &out)
                    continue
                }
                i += 4
                if (0xD800...0xDBFF).contains(v) {
                    if i + 6 <= n, raw[i] == 0x5C, raw[i + 1] == UInt8(ascii: "u"), let low = hex4(raw, at: i + 2),
                        (0xDC00...0xDFFF).contains(low)
                    {
                        appendScalar(0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00), to: &out)
                        i += 6
                    } else {
                        appendScalar(0xFFFD, to: &out)
                    }
                } else if (0xDC00...0xDFFF).contains(v) {
                    appendScalar(0xFFFD, to: &out)
                } else {
                    appendScalar(v, to: &out)
                }
            default: out.append(e)  // `"` `\` `/`
            }
        }
        return out
    }

    /// The value of four hex digits at `at`, nil when they are not.
    static func hex4(_ b: UnsafeBufferPointer<UInt8>, at: Int) -> UInt32? {
        guard at + 4 <= b.count else { return nil }
        var v: UInt32 = 0
        for k in 0..<4 {
            guard let d = hexValue(b[at + k]) else { return nil }
            v = v << 4 | d
        }
        return v
    }

    @inline(__always) static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: UInt32(c - 0x30)
        case 0x41...0x46: UInt32(c - 0x41 + 10)
        case 0x61...0x66: UInt32(c - 0x61 + 10)
        default: nil
        }
    }

    /// Appends one Unicode scalar (never a surrogate) as UTF-8.
    static func appendScalar(_ v: UInt32, to out: inout [UInt8]) {
        switch v {
        case 0..<0x80: out.append(UInt8(v))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | v >> 6))
            out.append(UInt8(0x80 | v & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | v >> 12))
            out.append(UInt8(0x80 | v >> 6 & 0x3F))
            out.append(UInt8(0x80 | v & 0x3F))
        default:
            out.append(UInt8(0xF0 | v >> 18))
            out.append(UInt8(0x80 | v >> 12 & 0x3F))
            out.append(UInt8(0x80 | v >> 6 & 0x3F))
            out.append(UInt8(0x80 | v & 0x3F))
        }
    }

    /// Whether `bytes` are well-formed UTF-8 (no overlong forms, surrogates or values past
    /// U+10FFFF), without building a String.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            let c = bytes[i]
            if c < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                high = 0x9F
            case 0xF0:
                length = 4
                low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                high = 0x8F
            default: return false
            }
            guard i + length <= n, bytes[i + 1] >= low, bytes[i + 1] <= high else { return false }
            for k in 2..<max(length, 2) where bytes[i + k] < 0x80 || bytes[i + k] > 0xBF { return false }
            i += length
        }
        return true
    }
}
