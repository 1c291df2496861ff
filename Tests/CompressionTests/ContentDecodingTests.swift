import Testing

@testable import Compression

@Suite struct ContentDecodingTests {
    let text = Array(String(repeating: #"{"name":"AppLaunch","appId":"com.contoso"}"# + "\n", count: 200).utf8)
    let limits = Inflate.Limits()

    @Test(arguments: [("gzip", ZlibFormat.gzip), ("deflate", .zlib), ("deflate", .raw), ("x-gzip", .gzip)])
    func everyEncodingRoundTrips(encoding: String, format: ZlibFormat) throws {
        let compressed = try Deflate.compress(text, level: 6, format: format)
        #expect(try ContentDecoding.decode(compressed, contentEncoding: encoding, limits: limits) == text)
    }

    @Test func identityPassesThrough() throws {
        #expect(try ContentDecoding.decode(text, contentEncoding: nil, limits: limits) == text)
        #expect(try ContentDecoding.decode(text, contentEncoding: "identity", limits: limits) == text)
    }

    @Test func truncatedStreamsAreNamed() throws {
        for format in ZlibFormat.allCases {
            let compressed = try Deflate.compress(text, format: format)
            #expect(throws: CompressionError.truncated(format: format.rawValue)) {
                try Inflate.decompress(Array(compressed.prefix(compressed.count / 2)), format: format)
            }
        }
    }

    @Test func garbageIsCorrupt() {
        #expect(throws: CompressionError.self) {
            try ContentDecoding.decode(Array("hello, not compressed".utf8), contentEncoding: "gzip", limits: limits)
        }
    }

    @Test func bombIsStoppedAtTheLimitWithBoundedOutput() throws {
        let zeros = [UInt8](repeating: 0, count: 64 << 20)
        let bomb = try Deflate.compress(zeros, level: 9, format: .zlib)
        #expect(bomb.count < 100_000)
        #expect(throws: CompressionError.ratioLimit(limit: 200)) {
            try ContentDecoding.decode(bomb, contentEncoding: "deflate", limits: Inflate.Limits(maxOutputBytes: 1 << 30, maxRatio: 200))
        }
        #expect(throws: CompressionError.outputLimit(limit: 1 << 20)) {
            try ContentDecoding.decode(bomb, contentEncoding: "deflate", limits: Inflate.Limits(maxOutputBytes: 1 << 20, maxRatio: 100_000))
        }
    }

    @Test func unsupportedEncodingIsNamed() {
        #expect(throws: CompressionError.unsupportedEncoding("br")) {
            try ContentDecoding.decode(text, contentEncoding: "br", limits: limits)
        }
    }
}
