import StoreCore
import TestSupport
import Testing

@testable import TelemetryStore

/// The GUID coding is on every read of a compacted row: the text must come back byte for
/// byte whatever it holds (escape bytes, near-GUIDs, GUIDs at the edges), and a coded stream
/// that points outside the table must throw rather than spell some other GUID.
@Suite struct GuidTableTests {
    static let a = "0f8fad5b-d9cb-469f-a165-70867728950e"
    static let b = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

    static func roundTrip(_ text: [UInt8], relative: Bool) throws -> [UInt8] {
        var coder = GuidTable()
        var coded: [UInt8] = []
        coder.code(text[...], into: &coded, relative: relative)
        var reader = try GuidTable(stored: coder.stored[...])
        var out: [UInt8] = Array("prefix:".utf8)
        try reader.decode(coded[...], into: &out, relative: relative)
        #expect(Array(out.prefix(7)) == Array("prefix:".utf8))
        return Array(out.dropFirst(7))
    }

    @Test(arguments: [true, false])
    func textComesBackByteForByte(relative: Bool) throws {
        let samples: [[UInt8]] = [
            Array("{\"deviceId\":\"\(Self.a)\",\"sessionId\":\"\(Self.b)\",\"again\":\"\(Self.a)\"}".utf8),
            Array("\(Self.a)\(Self.b)".utf8),
            [0x01, 0x01, 0x00, 0x01] + Array(Self.a.utf8) + [0x01, 0x80, 0xFF],
            Array(Self.a.uppercased().utf8) + Array(Self.a.replacingOccurrences(of: "-", with: "").utf8),
            Array(Self.a.dropLast().utf8),
            Array("0f8fad5b-d9cb-469f-a165-70867728950g".utf8),
            [],
            Array(repeating: 0x01, count: 300),
        ]
        for text in samples {
            #expect(try Self.roundTrip(text, relative: relative) == text)
        }
    }

    /// Random text built from GUIDs, their fragments, dashes, hex and escape bytes: the
    /// dash-driven coder must find every GUID and give back every byte, wherever they fall.
    @Test(arguments: [true, false])
    func randomTextComesBackAndEveryGuidIsCoded(relative: Bool) throws {
        var random = SeededRandom(seed: 77)
        let pieces: [[UInt8]] = [
            Array(Self.a.utf8), Array(Self.b.utf8), Array(Self.a.prefix(20).utf8), Array(Self.b.suffix(20).utf8), [0x2D], [0x2D, 0x2D],
            [0x01], Array("abcdef0123".utf8), Array("\",\"x\":\"".utf8), [0xC3, 0xA9],
        ]
        for _ in 0..<500 {
            var text: [UInt8] = []
            for _ in 0..<Int(random.next() % 12) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            #expect(try Self.roundTrip(text, relative: relative) == text, "\(text)")
            var coder = GuidTable()
            var coded: [UInt8] = []
            coder.code(text[...], into: &coded, relative: relative)
            // No spelled GUID survives coding (each became a reference).
            let left = String(decoding: coded, as: UTF8.self)
            #expect(!left.contains(Self.a) && !left.contains(Self.b), "\(text)")
        }
    }

    @Test func spellingIsLowerCaseEightFourFourFourTwelve() {
        var out: [UInt8] = []
        GuidTable.spell(GuidTable.Guid(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210), into: &out)
        GuidTable.spell(GuidTable.Guid(high: 0, low: .max), into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "01234567-89ab-cdef-fedc-ba987654321000000000-0000-0000-ffff-ffffffffffff")
    }

    @Test func manyGuidsAndFarReferencesComeBack() throws {
        var text: [UInt8] = []
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        var spelled: [[UInt8]] = []
        for _ in 0..<500 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var one: [UInt8] = []
            GuidTable.spell(GuidTable.Guid(high: seed, low: ~seed &* 31), into: &one)
            spelled.append(one)
        }
        for i in 0..<2_000 { text += spelled[(i * 7919) % 500] + Array(",\u{1}x".utf8) }
        #expect(try Self.roundTrip(text, relative: true) == text)
        #expect(try Self.roundTrip(text, relative: false) == text)
    }

    @Test func referencesOutsideTheTableThrow() throws {
        let table = try GuidTable(stored: [UInt8](repeating: 7, count: 16)[...])
        let streams: [(coded: [UInt8], relative: Bool)] = [
            ([0x01, 0x02], false),  // entry 1 of a one-entry table
            ([0x01, 0x01, 0x01, 0x01], true),  // a second "next" GUID
            ([0x01, 0x03], true),  // two back before any
            ([0x01, 0x80], false),  // varint cut off
            ([0x41, 0x01], true),  // escape at the end
        ]
        for (coded, relative) in streams {
            var reader = table
            var out: [UInt8] = []
            #expect(throws: StoreError.self) { try reader.decode(coded[...], into: &out, relative: relative) }
        }
    }
}
