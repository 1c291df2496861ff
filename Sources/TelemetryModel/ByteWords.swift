/// Searches over JSON text eight bytes per step, for the loops that cross every byte of every
/// record read (the repair screen, the string scanner): most of a record's bytes lie inside
/// strings, where only a few byte values matter. A byte equal to the one sought turns to zero
/// under XOR, and `(x - 0x01…) & ~x & 0x80…` flags the bytes of `x` below 0x01 (zero), or with
/// 0x20… instead of 0x01… the bytes below 0x20; a borrow can only flag a byte above a flagged
/// one, so the lowest flag is always a real one.
enum ByteWords {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    @inline(__always) private static func word(_ base: UnsafeRawPointer, _ i: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
    }

    /// Flags (0x80 in a byte) the bytes of `w` equal to `byte`.
    @inline(__always) private static func equal(_ w: UInt64, _ byte: UInt8) -> UInt64 {
        let x = w ^ (ones &* UInt64(byte))
        return (x &- ones) & ~x & highs
    }

    /// The index of the first `"` or `\` at or after `start`, or `b.count`.
    static func quoteOrBackslash(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        if let base = UnsafeRawPointer(b.baseAddress) {
            while i + 8 <= b.count {
                let w = word(base, i)
                let found = equal(w, 0x22) | equal(w, 0x5C)
                if found != 0 { return i + found.trailingZeroBitCount / 8 }
                i += 8
            }
        }
        while i < b.count, b[i] != 0x22, b[i] != 0x5C { i += 1 }
        return i
    }

    /// The index of the first byte at or after `start` that a string scanner must look at
    /// (`"`, `\` or a control character below 0x20), or the last index where fewer than eight
    /// bytes remain. `nonASCII` is set when a byte passed over, or one in the eight-byte
    /// step that found the answer, is 0x80 or above (over-inclusive: it only asks for a UTF-8
    /// check).
    static func stringSpecial(_ b: UnsafeBufferPointer<UInt8>, from start: Int, nonASCII: inout Bool) -> Int {
        var i = start
        guard let base = UnsafeRawPointer(b.baseAddress) else { return i }
        let spaces = ones &* 0x20
        while i + 8 <= b.count {
            let w = word(base, i)
            if w & highs != 0 { nonASCII = true }
            let found = equal(w, 0x22) | equal(w, 0x5C) | ((w &- spaces) & ~w & highs)
            if found != 0 { return i + found.trailingZeroBitCount / 8 }
            i += 8
        }
        return i
    }
}
