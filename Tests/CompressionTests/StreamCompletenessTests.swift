import Testing

@testable import Compression

/// A compressed body is decoded whole or refused: every gzip member is inflated, bytes after
/// the end of a stream are an error, and the bomb limits and the caller's output budget see
/// every member (issue 11 items 4 and 12).
@Suite struct StreamCompletenessTests {
    static func lines(_ tag: String, _ count: Int) -> [UInt8] {
        Array((0..<count).map { #"{"name":"AppLaunch","appId":"com.contoso","eventId":"\#(tag)-\#($0)"}"# + "\n" }.joined().utf8)
    }

    let limits = Inflate.Limits()

    @Test func concatenatedGzipMembersAreAllDecoded() throws {
        let a = Self.lines("a", 100)
        let b = Self.lines("b", 150)
        let body = try Deflate.compress(a, format: .gzip) + Deflate.compress(b, format: .gzip)
        let out = try ContentDecoding.decode(body, contentEncoding: "gzip", limits: limits)
        #expect(out.count == a.count + b.count)
        #expect(out == a + b, "the members were not decoded in order")
    }

    @Test func manyMembersIncludingEmptyOnes() throws {
        var body: [UInt8] = []
        var expected: [UInt8] = []
        for i in 0..<40 {
            let part = i % 5 == 0 ? [] : Self.lines("m\(i)", i)
            body += try Deflate.compress(part, format: .gzip)
            expected += part
        }
        let out = try Inflate.decompress(body, format: .gzip, limits: limits)
        #expect(out.count == expected.count)
        #expect(out == expected, "the members were not decoded in order")
    }

    @Test(arguments: [
        ("gzip", ZlibFormat.gzip), ("deflate", .zlib), ("deflate", .raw),
    ])
    func trailingGarbageIsRefusedByName(encoding: String, format: ZlibFormat) throws {
        let stream = try Deflate.compress(Self.lines("t", 20), format: format)
        for tail: [UInt8] in [Array("garbage".utf8), [0, 0, 0, 0], [0x1F]] {
            do {
                _ = try ContentDecoding.decode(stream + tail, contentEncoding: encoding, limits: limits)
                Issue.record("\(format) + \(tail.count) trailing bytes was accepted")
            } catch let error as CompressionError {
                guard case .trailingData(_, let n) = error else {
                    Issue.record("\(format): expected trailingData, got \(error)")
                    continue
                }
                #expect(n == tail.count)
                #expect(error.description.contains("trailing data"))
            }
        }
    }

    @Test func onlyGzipHasMembers() throws {
        for format in [ZlibFormat.zlib, .raw] {
            let one = try Deflate.compress(Self.lines("z", 10), format: format)
            #expect(throws: CompressionError.trailingData(format: format.rawValue, bytes: one.count)) {
                _ = try Inflate.decompress(one + one, format: format)
            }
        }
    }

    @Test func aDamagedLaterMemberIsNotIgnored() throws {
        let first = try Deflate.compress(Self.lines("f", 30), format: .gzip)
        let second = try Deflate.compress(Self.lines("s", 30), format: .gzip)
        #expect(throws: CompressionError.truncated(format: "gzip")) {
            _ = try Inflate.decompress(first + second.prefix(second.count - 6), format: .gzip)
        }
        var corrupt = second
        corrupt[corrupt.count - 5] ^= 0xFF  // the length field of the trailer
        #expect(throws: CompressionError.self) {
            _ = try Inflate.decompress(first + corrupt, format: .gzip)
        }
    }

    /// Eight 256 KiB members of zeros: each alone is under the ratio grace, together they
    /// are a 2 MiB bomb with a ratio far beyond the limit. The limits apply to the body.
    @Test func bombLimitsSpanMembers() throws {
        let member = try Deflate.compress([UInt8](repeating: 0, count: 256 << 10), level: 9, format: .gzip)
        let body = (0..<8).flatMap { _ in member }
        #expect(throws: CompressionError.ratioLimit(limit: 200)) {
            _ = try Inflate.decompress(body, format: .gzip, limits: Inflate.Limits(maxOutputBytes: 64 << 20, maxRatio: 200))
        }
        #expect(throws: CompressionError.outputLimit(limit: 1 << 20)) {
            _ = try Inflate.decompress(body, format: .gzip, limits: Inflate.Limits(maxOutputBytes: 1 << 20, maxRatio: .max))
        }
    }

    struct BudgetExhausted: Error {}

    @Test func everyProducedByteIsReservedAndARefusalStopsInflating() throws {
        let a = Self.lines("r", 3000)
        let body = try Deflate.compress(a, format: .gzip) + Deflate.compress(a, format: .gzip)
        var reserved = 0
        let out = try ContentDecoding.decode(body, contentEncoding: "gzip", limits: limits) { reserved += $0 }
        #expect(out.count == 2 * a.count)
        #expect(reserved == out.count)

        // A budget that runs out mid-body: inflating stops at once with the budget's error.
        var granted = 0
        #expect(throws: BudgetExhausted.self) {
            _ = try ContentDecoding.decode(body, contentEncoding: "gzip", limits: limits) { n in
                guard granted + n <= 100_000 else { throw BudgetExhausted() }
                granted += n
            }
        }
        #expect(granted <= 100_000)
    }

    @Test func identityReservesNothing() throws {
        var calls = 0
        _ = try ContentDecoding.decode(Self.lines("i", 10), contentEncoding: nil, limits: limits) { _ in calls += 1 }
        #expect(calls == 0)
    }
}
