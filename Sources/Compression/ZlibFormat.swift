/// The three framings of DEFLATE data the daemon meets. They differ only in header and
/// trailer, which zlib selects through the `windowBits` argument.
public enum ZlibFormat: String, Sendable, CaseIterable {
    /// RFC 1950: 2-byte header, Adler-32 trailer. Our on-disk block format.
    case zlib
    /// RFC 1951: bare DEFLATE, as the Microsoft collector convention sends `deflate`.
    case raw
    /// RFC 1952: gzip member.
    case gzip

    var windowBits: Int32 {
        switch self {
        case .zlib: 15
        case .raw: -15
        case .gzip: 15 + 16
        }
    }

    /// Whether `bytes` start with a valid RFC 1950 header: compression method 8, a window of
    /// at most 32 KiB, and the header checksum (a multiple of 31). Raw DEFLATE data passes
    /// this only by accident, and `ContentDecoding` falls back to raw when it does.
    public static func looksLikeZlibHeader(_ b0: UInt8, _ b1: UInt8) -> Bool {
        (b0 & 0x0F) == 8 && (b0 >> 4) <= 7 && ((UInt16(b0) << 8) | UInt16(b1)) % 31 == 0
    }
}
