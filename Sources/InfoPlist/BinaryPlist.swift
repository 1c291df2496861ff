/// A bounds-checked reader for the part of Apple's binary plist format (`bplist00`) the app
/// registry needs: a top-level dictionary of scalars and one nested dictionary
/// (`IntuneMAMSettings`). Foundation's decoder traps on some malformed binary plists (found
/// by fuzzing), and a file a user hands to `mamtelemetryctl apps import` must only ever be
/// refused, so every offset, length and reference here is checked before use.
enum BinaryPlist {
    /// A value the reader understands; anything else (dates, data, arrays, sets) is `.other`.
    enum Value: Equatable {
        case bool(Bool)
        case int(Int64)
        case real(Double)
        case string(String)
        case dictionary([String: Value])
        case other
    }

    struct Malformed: Error {
        let reason: String
    }

    /// Any `bplist` header: versions other than 00 are refused here rather than handed to a
    /// decoder that might trap on them.
    static func isBinary(_ b: [UInt8]) -> Bool { b.starts(with: Array("bplist".utf8)) }

    /// Parses `b` and returns the top-level dictionary.
    static func topDictionary(_ b: [UInt8]) throws -> [String: Value] {
        guard b.starts(with: Array("bplist00".utf8)) else { throw Malformed(reason: "unsupported binary plist version") }
        guard b.count >= 8 + 32 else { throw Malformed(reason: "too short for a binary plist") }
        let trailer = b.count - 32
        let offsetSize = Int(b[trailer + 6])
        let refSize = Int(b[trailer + 7])
        let objectCount = try uint(b, at: trailer + 8, size: 8)
        let top = try uint(b, at: trailer + 16, size: 8)
        let tableOffset = try uint(b, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(refSize), objectCount > 0, objectCount < 1 << 24,
            top < objectCount, tableOffset >= 8, tableOffset <= UInt64(trailer),
            UInt64(trailer) - tableOffset >= objectCount * UInt64(offsetSize)
        else { throw Malformed(reason: "inconsistent trailer") }
        let reader = Reader(b: b, offsetSize: offsetSize, refSize: refSize, objectCount: Int(objectCount), tableOffset: Int(tableOffset))
        guard case .dictionary(let d) = try reader.object(Int(top), depth: 0) else {
            throw Malformed(reason: "the top level is not a dictionary")
        }
        return d
    }

    static func uint(_ b: [UInt8], at offset: Int, size: Int) throws -> UInt64 {
        guard offset >= 0, size >= 1, size <= 8, offset + size <= b.count else { throw Malformed(reason: "read past the end") }
        var v: UInt64 = 0
        for i in 0..<size { v = v << 8 | UInt64(b[offset + i]) }
        return v
    }

    struct Reader {
        let b: [UInt8]
        let offsetSize: Int
        let refSize: Int
        let objectCount: Int
        let tableOffset: Int

        func offset(of object: Int) throws -> Int {
            guard object >= 0, object < objectCount else { throw Malformed(reason: "object reference out of range") }
            let o = try BinaryPlist.uint(b, at: tableOffset + object * offsetSize, size: offsetSize)
            guard o >= 8, o < UInt64(tableOffset) else { throw Malformed(reason: "object offset out of range") }
            return Int(o)
        }

        /// Length of a container or string: the low nibble, or a following int object when 0xF.
        func length(marker: UInt8, at start: Int) throws -> (count: Int, next: Int) {
            let low = Int(marker & 0x0F)
            guard low == 0x0F else { return (low, start + 1) }
            guard start + 1 < b.count, b[start + 1] >> 4 == 0x1 else { throw Malformed(reason: "bad length") }
            let size = 1 << Int(b[start + 1] & 0x0F)
            let n = try BinaryPlist.uint(b, at: start + 2, size: size)
            guard n < UInt64(b.count) else { throw Malformed(reason: "length past the end") }
            return (Int(n), start + 2 + size)
        }

        func object(_ index: Int, depth: Int) throws -> Value {
            let start = try offset(of: index)
            let marker = b[start]
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: return .other
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                guard size <= 8 else { return .other }
                let raw = try BinaryPlist.uint(b, at: start + 1, size: size)
                return .int(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
            case 0x2:
                let size = 1 << Int(marker & 0x0F)
                let raw = try BinaryPlist.uint(b, at: start + 1, size: size)
                switch size {
                case 4: return .real(Double(Float(bitPattern: UInt32(raw))))
                case 8: return .real(Double(bitPattern: raw))
                default: return .other
                }
            case 0x5:
                let (n, first) = try length(marker: marker, at: start)
                guard first + n <= tableOffset else { throw Malformed(reason: "string past the end") }
                return .string(String(decoding: b[first..<first + n], as: UTF8.self))
            case 0x6:
                let (n, first) = try length(marker: marker, at: start)
                guard n <= (tableOffset - first) / 2 else { throw Malformed(reason: "string past the end") }
                var units: [UInt16] = []
                units.reserveCapacity(n)
                for i in 0..<n { units.append(UInt16(b[first + 2 * i]) << 8 | UInt16(b[first + 2 * i + 1])) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0xD:
                // Only the top dictionary and one nested level are read.
                guard depth < 2 else { return .other }
                let (n, first) = try length(marker: marker, at: start)
                guard n <= (tableOffset - first) / (2 * refSize) else { throw Malformed(reason: "dictionary past the end") }
                var out: [String: Value] = [:]
                for i in 0..<n {
                    let keyRef = try BinaryPlist.uint(b, at: first + i * refSize, size: refSize)
                    let valueRef = try BinaryPlist.uint(b, at: first + (n + i) * refSize, size: refSize)
                    guard keyRef < UInt64(objectCount), valueRef < UInt64(objectCount) else {
                        throw Malformed(reason: "dictionary reference out of range")
                    }
                    guard case .string(let key) = try object(Int(keyRef), depth: depth + 1) else { continue }
                    out[key] = try object(Int(valueRef), depth: depth + 1)
                }
                return .dictionary(out)
            default:
                return .other
            }
        }
    }
}
