/// Lower-case GUIDs (`8-4-4-4-12` hex digits) in a segment's text, replaced by references to
/// one table of 16-byte binary GUIDs per segment. Telemetry carries several per record
/// (device, session, account, tenant); as text zlib spends ~22 bytes on each new one and
/// cannot see a repeat further back than its 32 KiB window, while the table stores each
/// distinct GUID once, in 16 bytes, for the whole segment and both of its streams.
///
/// In the coded text byte 0x01 starts an escape followed by a varint `v`: 0 is a literal
/// 0x01 (so any bytes round-trip). In the payload stream 1 is "the next GUID of the table"
/// and `v >= 2` is the GUID `v - 1` entries before that one (payload GUIDs enter the table in
/// order of first appearance, so new ones cost one byte and near repeats a small distance);
/// in the keys stream `v >= 1` is the table entry `v - 1`.
struct GuidTable {
    struct Guid: Hashable {
        var high: UInt64
        var low: UInt64
    }

    private(set) var guids: [Guid] = []
    private var index: [Guid: Int] = [:]
    /// Payload GUIDs handed out so far by "next" references (decoding only).
    private var nextNew = 0

    static let escape: UInt8 = 0x01

    init() {}

    /// A table read back from its stored form (16 bytes per entry).
    init(stored bytes: ArraySlice<UInt8>) throws {
        guard bytes.count % 16 == 0 else { throw StoreError.corruptBlock("GUID table is not a whole number of entries") }
        var i = bytes.startIndex
        guids.reserveCapacity(bytes.count / 16)
        while i < bytes.endIndex {
            var high: UInt64 = 0
            var low: UInt64 = 0
            for j in 0..<8 { high = high << 8 | UInt64(bytes[i + j]) }
            for j in 8..<16 { low = low << 8 | UInt64(bytes[i + j]) }
            guids.append(Guid(high: high, low: low))
            i += 16
        }
    }

    var stored: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(guids.count * 16)
        for g in guids {
            for j in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: g.high >> (8 * UInt64(j)))) }
            for j in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: g.low >> (8 * UInt64(j)))) }
        }
        return out
    }

    // MARK: Encoding

    /// Appends `text` to `out` with its GUIDs coded; `relative` selects the payload coding.
    mutating func code(_ text: ArraySlice<UInt8>, into out: inout [UInt8], relative: Bool) {
        var i = text.startIndex
        let end = text.endIndex
        while i < end {
            let c = text[i]
            if c == Self.escape {
                out.append(Self.escape)
                out.append(0)
                i += 1
                continue
            }
            if end - i >= 36, let guid = Self.guid(at: i, in: text) {
                out.append(Self.escape)
                if let known = index[guid] {
                    var w = ByteWriter()
                    w.varint(relative ? UInt64(guids.count - known + 1) : UInt64(known + 1))
                    out.append(contentsOf: w.bytes)
                } else if relative {
                    index[guid] = guids.count
                    guids.append(guid)
                    out.append(1)
                } else {
                    index[guid] = guids.count
                    var w = ByteWriter()
                    w.varint(UInt64(guids.count + 1))
                    out.append(contentsOf: w.bytes)
                    guids.append(guid)
                }
                i += 36
                continue
            }
            out.append(c)
            i += 1
        }
    }

    /// The GUID spelled at `i` (36 bytes, lower-case hex, dashes at 8, 13, 18, 23), if any.
    @inline(__always)
    private static func guid(at i: Int, in text: ArraySlice<UInt8>) -> Guid? {
        guard text[i + 8] == 0x2D, text[i + 13] == 0x2D, text[i + 18] == 0x2D, text[i + 23] == 0x2D else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for j in 0..<36 where j != 8 && j != 13 && j != 18 && j != 23 {
            let c = text[i + j]
            let v: UInt64
            switch c {
            case 0x30...0x39: v = UInt64(c - 0x30)
            case 0x61...0x66: v = UInt64(c - 0x61 + 10)
            default: return nil
            }
            if digits < 16 { high = high << 4 | v } else { low = low << 4 | v }
            digits += 1
        }
        return Guid(high: high, low: low)
    }

    // MARK: Decoding

    /// Appends the text `coded` stands for to `out`.
    mutating func decode(_ coded: ArraySlice<UInt8>, into out: inout [UInt8], relative: Bool) throws {
        var r = ByteReader(Array(coded))
        out.reserveCapacity(out.count + coded.count * 2)
        while !r.atEnd {
            let c = try r.byte()
            guard c == Self.escape else {
                out.append(c)
                continue
            }
            let v = try r.varint()
            if v == 0 {
                out.append(Self.escape)
                continue
            }
            let entry: Int
            if relative {
                if v == 1 {
                    entry = nextNew
                    nextNew += 1
                } else {
                    guard v - 1 <= UInt64(nextNew) else { throw StoreError.corruptBlock("GUID reference before the table") }
                    entry = nextNew - Int(v - 1)
                }
            } else {
                entry = Int(clamping: v - 1)
            }
            guard entry < guids.count else { throw StoreError.corruptBlock("GUID reference past the table") }
            Self.spell(guids[entry], into: &out)
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func spell(_ g: Guid, into out: inout [UInt8]) {
        var digits = 0
        for j in 0..<36 {
            if j == 8 || j == 13 || j == 18 || j == 23 {
                out.append(0x2D)
                continue
            }
            let word = digits < 16 ? g.high : g.low
            let shift = UInt64(60 - 4 * (digits % 16))
            out.append(hexDigits[Int((word >> shift) & 0xF)])
            digits += 1
        }
    }
}
