import TestSupport
import Testing

@testable import Compression

/// Input fed to a ``DeflateStream`` in pieces comes out as the same bytes one
/// `Deflate.compress` call makes of the whole, so a writer may stream without changing what
/// it stores.
@Suite struct DeflateStreamTests {
    @Test(arguments: 0..<PropertyScale.cases(12))
    func piecesGiveTheBytesOfOneCall(round: Int) throws {
        var random = SeededRandom(seed: PropertyScale.seed(29) &+ UInt64(round))
        // Telemetry-like text with repeats near and far, and runs of noise zlib cannot shorten.
        var text: [UInt8] = []
        let target = 1 + random.below(400_000)
        while text.count < target {
            if random.below(4) == 0 {
                text += (0..<random.below(300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                text += Array(#"{"name":"AppLaunch","appId":"com.app\#(random.below(9))","n":\#(random.below(100_000))}"#.utf8) + [0x0A]
            }
        }
        let level = Int32(random.pick([1, 6, 8, 9]))
        let dictionary: [UInt8]? = random.below(2) == 0 ? Array(#""appId":"com.app","name":"AppLaunch""#.utf8) : nil
        let stream = try DeflateStream(level: level, dictionary: dictionary)
        var at = 0
        while at < text.count {
            let piece = min(text.count - at, random.pick([1, 7, 500, 16_384, 70_000]))
            try stream.append(Array(text[at..<at + piece]))
            at += piece
        }
        let streamed = try stream.finish()
        #expect(streamed == (try Deflate.compress(text, level: level, dictionary: dictionary)), "level \(level), \(text.count) bytes")
        #expect(try Inflate.decompress(streamed, format: .zlib, dictionary: dictionary) == text)
    }

    @Test func anEmptyStreamIsAValidEmptyBlock() throws {
        let streamed = try DeflateStream().finish()
        #expect(streamed == (try Deflate.compress([])))
        #expect(try Inflate.decompress(streamed, format: .zlib).isEmpty)
    }
}
