/// Minimal little-endian / varint byte writer and reader for the store's own block formats.
package struct ByteWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    package mutating func int64(_ v: Int64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}

package struct ByteReader {
    package let bytes: [UInt8]
    package var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var atEnd: Bool { offset >= bytes.count }

    package mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count, shift < 64 else { throw StoreError.corruptBlock("varint past end") }
            let b = bytes[offset]
            offset += 1
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    package mutating func int64() throws -> Int64 {
        guard offset + 8 <= bytes.count else { throw StoreError.corruptBlock("int64 past end") }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return Int64(bitPattern: v)
    }

    package mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw StoreError.corruptBlock("byte past end") }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func string() throws -> String {
        let length = try varint()
        guard length <= UInt64(bytes.count - offset) else { throw StoreError.corruptBlock("string past end") }
        let n = Int(length)
        defer { offset += n }
        return String(decoding: bytes[offset..<offset + n], as: UTF8.self)
    }
}

/// The code segments use for a sequence of entries drawn from a table that grows as they are
/// met: 0 is "the next entry not met before" (most codes of a run of new values, which zlib
/// squeezes to almost nothing) and n > 0 is entry n − 1. Column dictionaries and GUID maps
/// both read it.
package enum NextOrIndexCode {
    /// The entry `code` names; `next` is the next new entry's index, advanced when used.
    @inline(__always)
    package static func entry(_ code: UInt64, next: inout Int) -> Int {
        guard code > 0 else {
            defer { next += 1 }
            return next
        }
        return Int(clamping: code - 1)
    }
}
