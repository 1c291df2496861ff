import StoreCore

#if canImport(Glibc)
    import Glibc
#endif

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

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        /// The entry stored at `offset` of `bytes` (16 bytes, big-endian halves).
        init(stored bytes: [UInt8], at offset: Int) {
            (high, low) = bytes.withUnsafeBytes { raw in
                (
                    UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                    UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
                )
            }
        }
    }

    private(set) var guids: [Guid] = []
    private var index = WideKeyTable()
    /// Payload GUIDs handed out so far by "next" references (decoding only).
    private var nextNew = 0

    static let escape: UInt8 = 0x01

    init() {}

    /// A table of `guids` in this order (a group's view of a segment's shared table).
    init(guids: [Guid]) {
        self.guids = guids
    }

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

    /// Adds `guid` to the table unless it is there: nil when it was added, else its index.
    mutating func share(_ guid: Guid) -> Int? {
        if let known = index.insert(high: guid.high, low: guid.low, value: guids.count) { return known }
        guids.append(guid)
        return nil
    }

    /// Appends `text` to `out` with its GUIDs coded; `relative` selects the payload coding.
    /// Every GUID has a dash 8 bytes in, so the text is searched for dashes (`memchr`) and
    /// only there checked for a GUID; the runs between are copied whole, escaping any 0x01.
    mutating func code(_ text: ArraySlice<UInt8>, into out: inout [UInt8], relative: Bool) {
        text.withUnsafeBufferPointer { buf in
            guard let base = buf.baseAddress else { return }
            let end = buf.count
            var copied = 0
            var search = 8
            while search < end - 27 {
                guard let hit = memchr(base + search, 0x2D, end - 27 - search) else { break }
                let dash = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) - base
                let start = dash - 8
                guard start >= copied, let guid = Self.guid(at: start, in: buf) else {
                    search = dash + 1
                    continue
                }
                appendLiteral(UnsafeBufferPointer(rebasing: buf[copied..<start]), to: &out)
                append(guid, relative: relative, to: &out)
                copied = start + 36
                search = copied + 8
            }
            appendLiteral(UnsafeBufferPointer(rebasing: buf[copied..<end]), to: &out)
        }
    }

    /// Text between GUIDs, with the escape byte escaped.
    @inline(__always)
    private func appendLiteral(_ run: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        guard let base = run.baseAddress, !run.isEmpty else { return }
        var at = 0
        while at < run.count, let hit = memchr(base + at, Int32(Self.escape), run.count - at) {
            let escape = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) - base
            out.append(contentsOf: UnsafeBufferPointer(rebasing: run[at..<escape]))
            out.append(Self.escape)
            out.append(0)
            at = escape + 1
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: run[at...]))
    }

    /// A reference to `guid`, entering it in the table when new.
    @inline(__always)
    private mutating func append(_ guid: Guid, relative: Bool, to out: inout [UInt8]) {
        out.append(Self.escape)
        if let known = index.value(high: guid.high, low: guid.low) {
            var w = ByteWriter()
            w.varint(relative ? UInt64(guids.count - known + 1) : UInt64(known + 1))
            out.append(contentsOf: w.bytes)
            return
        }
        index.insert(high: guid.high, low: guid.low, value: guids.count)
        if relative {
            out.append(1)
        } else {
            var w = ByteWriter()
            w.varint(UInt64(guids.count + 1))
            out.append(contentsOf: w.bytes)
        }
        guids.append(guid)
    }

    /// The GUID spelled at `i` (36 bytes, lower-case hex, dashes at 8, 13, 18, 23), if any.
    @inline(__always)
    private static func guid(at i: Int, in text: UnsafeBufferPointer<UInt8>) -> Guid? {
        guard i + 36 <= text.count, text[i + 8] == 0x2D, text[i + 13] == 0x2D, text[i + 18] == 0x2D, text[i + 23] == 0x2D else {
            return nil
        }
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

    /// Appends the text `coded` stands for to `out`. This is most of a query's work on
    /// compacted rows (every candidate segment's payload passes through it), so it copies each
    /// run of literal bytes whole (found with `memchr`) and spells GUIDs into a stack buffer,
    /// rather than appending byte by byte.
    mutating func decode(_ coded: ArraySlice<UInt8>, into out: inout [UInt8], relative: Bool) throws {
        // A caller that knows the decoded size has reserved it; otherwise guess generously.
        if out.capacity < out.count + coded.count { out.reserveCapacity(out.count + coded.count * 2) }
        try coded.withUnsafeBufferPointer { buf in
            guard let base = buf.baseAddress else { return }
            let end = buf.count
            var i = 0
            while i < end {
                let run =
                    memchr(base + i, Int32(Self.escape), end - i).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base }
                    ?? end
                if run > i { out.append(contentsOf: UnsafeBufferPointer(start: base + i, count: run - i)) }
                guard run < end else { return }
                i = run + 1
                var v: UInt64 = 0
                var shift: UInt64 = 0
                while true {
                    guard i < end, shift < 64 else { throw StoreError.corruptBlock("varint past end") }
                    let b = base[i]
                    i += 1
                    v |= UInt64(b & 0x7F) << shift
                    if b < 0x80 { break }
                    shift += 7
                }
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
    }

    /// Appends `g` as 36 bytes of lower-case `8-4-4-4-12` text: four 32-bit halves turned
    /// into eight hex digits each with word arithmetic (no per-digit loop), stored into a
    /// stack buffer with the dashes between.
    @inline(__always)
    static func spell(_ g: Guid, into out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(byteCount: 36, alignment: 8) { text in
            text.storeBytes(of: hex8(UInt32(truncatingIfNeeded: g.high >> 32)).bigEndian, toByteOffset: 0, as: UInt64.self)
            text[8] = 0x2D
            // Digits 8-15 go to 9-12 and 14-17: stored at 10-17, then the first four moved back one.
            text.storeBytes(of: hex8(UInt32(truncatingIfNeeded: g.high)).bigEndian, toByteOffset: 10, as: UInt64.self)
            text.storeBytes(of: text.loadUnaligned(fromByteOffset: 10, as: UInt32.self), toByteOffset: 9, as: UInt32.self)
            text[13] = 0x2D
            text[18] = 0x2D
            text.storeBytes(of: hex8(UInt32(truncatingIfNeeded: g.low >> 32)).bigEndian, toByteOffset: 20, as: UInt64.self)
            text.storeBytes(of: text.loadUnaligned(fromByteOffset: 20, as: UInt32.self), toByteOffset: 19, as: UInt32.self)
            text[23] = 0x2D
            text.storeBytes(of: hex8(UInt32(truncatingIfNeeded: g.low)).bigEndian, toByteOffset: 28, as: UInt64.self)
            out.append(contentsOf: UnsafeRawBufferPointer(text))
        }
    }

    /// The eight lower-case hex digits of `v` as ASCII bytes, most significant digit in the
    /// most significant byte: each nibble is spread into its own byte, then '0' is added,
    /// and 'a' - '0' - 10 more where the nibble is above 9.
    @inline(__always)
    static func hex8(_ v: UInt32) -> UInt64 {
        var x = UInt64(v)
        x = (x | x << 16) & 0x0000_FFFF_0000_FFFF
        x = (x | x << 8) & 0x00FF_00FF_00FF_00FF
        x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F
        let letters = ((x &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return x &+ 0x3030_3030_3030_3030 &+ letters &* 0x27
    }
}
