import TestSupport
import Testing

@testable import Compression

/// Blocks the daemon wrote itself are inflated in one call into an array of the size recorded
/// beside them (zlib streams by libdeflate, held here against zlib's streaming path). `exactSize` refuses a stream of any other length; `expectedSize` (a row an
/// older version may have counted differently) falls back to the streaming path, so for every
/// generated stream and every size, right or wrong, it answers exactly what the streaming path
/// answers: the same bytes, or the same error.
@Suite struct KnownSizeInflateTests {
    /// NDJSON-like text of `count` bytes with runs that compress (repeated members) and runs
    /// that do not (random bytes), so streams cover stored and compressed deflate blocks.
    static func text(_ count: Int, _ random: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            if random.below(3) == 0 {
                out += (0..<random.below(64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                out += Array(#"{"name":"AppLaunch","deviceId":"\#(random.below(1_000))"}"#.utf8) + [0x0A]
            }
        }
        return Array(out.prefix(count))
    }

    /// `plain` deflated at a random level; half of the streams damaged: a flipped byte, cut
    /// short, or followed by more bytes.
    static func deflated(_ plain: [UInt8], _ random: inout SeededRandom) throws -> [UInt8] {
        var stream = try Deflate.compress(plain, level: Int32(random.below(10)))
        switch random.below(6) {
        case 0 where stream.count > 2: stream[2 + random.below(stream.count - 2)] ^= UInt8(1 + random.below(255))
        case 1 where stream.count > 1: stream.removeLast(1 + random.below(stream.count - 1))
        case 2: stream += (0...random.below(8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        default: break
        }
        return stream
    }

    static func streaming(_ stream: [UInt8]) -> Result<[UInt8], CompressionError> {
        Result { try Inflate.decompress(stream, format: .zlib) }.mapError { $0 as! CompressionError }
    }

    static func expected(_ stream: [UInt8], size: Int) -> Result<[UInt8], CompressionError> {
        Result { try stream.withUnsafeBytes { try Inflate.decompress($0, format: .zlib, expectedSize: size) } }
            .mapError { $0 as! CompressionError }
    }

    static func exact(_ stream: [UInt8], size: Int) -> Result<[UInt8], Error> {
        Result { try stream.withUnsafeBytes { try Inflate.decompress($0, format: .zlib, exactSize: size) } }
    }

    @Test func everySizeAnswersWhatTheStreamingPathAnswers() throws {
        var random = SeededRandom(seed: 0x1F1A_7E00)
        for round in 0..<200 {
            let length = round < 20 ? round : random.below(300_000)
            let plain = Self.text(length, &random)
            let stream = try Self.deflated(plain, &random)
            let reference = Self.streaming(stream)
            let sizes = [length, length - 1, length + 1, 0, -1, random.below(length + 2), Int.max]
            for size in sizes {
                #expect(Self.expected(stream, size: size) == reference, "round \(round): \(length) bytes told \(size)")
            }
            // libdeflate answers exactly the streams zlib inflates to the recorded size, and no others.
            let whole = stream.withUnsafeBytes { WholeBufferInflate.zlib($0, size: length) }
            #expect(whole == (try? reference.get()).flatMap { $0.count == length ? $0 : nil }, "round \(round)")
            if case .success(let bytes) = reference {
                #expect(bytes == plain)
                #expect(try Self.exact(stream, size: length).get() == plain)
                for wrong in [length - 1, length + 1, length / 2] where wrong >= 0 && wrong != length {
                    #expect(throws: CompressionError.self, "round \(round): exact size \(wrong) of \(length)") {
                        try Self.exact(stream, size: wrong).get()
                    }
                }
            } else {
                #expect(throws: CompressionError.self) { try Self.exact(stream, size: length).get() }
            }
        }
    }

    /// A stored block of unrecorded size answers what the streaming path answers, for streams
    /// that compress by more than the first guess (a decode into a larger buffer) and damaged ones.
    @Test func aBlockOfUnrecordedSizeAnswersWhatTheStreamingPathAnswers() throws {
        var random = SeededRandom(seed: 0x5702_ED00)
        for round in 0..<200 {
            let length = round < 10 ? round : random.below(200_000)
            // Every fourth text is one byte repeated: it deflates about 1,000 to 1.
            let plain = round % 4 == 3 ? [UInt8](repeating: 0x61, count: length) : Self.text(length, &random)
            let stream = try Self.deflated(plain, &random)
            let reference = Self.streaming(stream)
            let stored = Result { try stream.withUnsafeBytes { try Inflate.decompressStored($0) } }.mapError { $0 as! CompressionError }
            #expect(stored == reference, "round \(round): \(length) bytes")
            let whole = stream.withUnsafeBytes { WholeBufferInflate.zlib($0, limit: Inflate.Limits.trusted.maxOutputBytes) }
            #expect(whole == (try? reference.get()), "round \(round): libdeflate decodes exactly what zlib does")
        }
    }
}
