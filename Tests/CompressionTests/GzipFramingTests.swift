import TestSupport
import Testing

@testable import Compression

/// A gzip member from `Deflate` is the zlib format's DEFLATE stream in RFC 1952 framing: the
/// fixed header zlib writes at level 6 on Unix, then the CRC-32 and size of the input. The
/// load generator's gzip bodies rely on this, so its figures compare with runs made when it
/// wrapped the zlib stream itself.
@Suite struct GzipFramingTests {
    /// CRC-32 (IEEE, reflected, polynomial 0xEDB88320) bit by bit: an oracle independent of zlib's.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func littleEndian(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// NDJSON-like text of a random length: repetitive enough to compress, varied enough to matter.
    static func sample(_ random: inout SeededRandom) -> [UInt8] {
        let count = random.below(400)
        var text = ""
        for _ in 0..<count { text += #"{"eventId":"\#(random.next())","statusCode":\#(random.below(600))}"# + "\n" }
        return Array(text.utf8)
    }

    @Test func gzipIsTheZlibStreamWithAGzipHeaderAndTrailer() throws {
        var random = SeededRandom(seed: PropertyScale.seed(0x6A1F))
        for _ in 0..<PropertyScale.cases(40) {
            let input = Self.sample(&random)
            let zlib = try Deflate.compress(input, level: 6, format: .zlib)
            let gzip = try Deflate.compress(input, level: 6, format: .gzip)
            let expected =
                [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3] + zlib[2..<(zlib.count - 4)] + Self.littleEndian(Self.crc32(input))
                + Self.littleEndian(UInt32(truncatingIfNeeded: input.count))
            #expect(gzip == expected, "\(input.count) input bytes")
            #expect(try Inflate.decompress(gzip, format: .gzip) == input)
        }
    }

    @Test func theOracleMatchesTheCheckValue() {
        // The CRC-32 check value of "123456789" (the catalogue's test vector).
        #expect(Self.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}
