import Foundation
import Testing

@testable import InfoPlist

/// The hand-written `bplist00` reader: every value type it understands reads back as
/// written, and a truncated or damaged document is refused with `Malformed`, never a trap.
@Suite struct BinaryPlistTests {
    /// Assembles a `bplist00` document from encoded objects: the object bytes, the offset
    /// table (`offsetSize` bytes per object) and the 32-byte trailer. Object 0 is the top.
    static func document(_ objects: [[UInt8]], offsetSize: Int = 1, refSize: Int = 1, top: UInt64 = 0) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(out.count)
            out += object
        }
        let tableOffset = out.count
        for offset in offsets { out += bigEndian(UInt64(offset), size: offsetSize) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
        out += bigEndian(UInt64(objects.count), size: 8) + bigEndian(top, size: 8) + bigEndian(UInt64(tableOffset), size: 8)
        return out
    }

    static func bigEndian(_ v: UInt64, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64(size - 1 - $0))) }
    }

    static func ascii(_ s: String) -> [UInt8] {
        let bytes = Array(s.utf8)
        return bytes.count < 15 ? [0x50 | UInt8(bytes.count)] + bytes : [0x5F, 0x10, UInt8(bytes.count)] + bytes
    }

    /// A dictionary object of `pairs.count` entries whose key and value references are given.
    static func dictionary(keys: [UInt8], values: [UInt8]) -> [UInt8] {
        [0xD0 | UInt8(keys.count)] + keys + values
    }

    /// One top dictionary holding every scalar type, a nested dictionary and a date (`.other`).
    static let everyType: [[UInt8]] = [
        dictionary(keys: [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 23], values: [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 24]),
        ascii("yes"), [0x09],
        ascii("no"), [0x08],
        ascii("byte"), [0x10, 0x7F],
        ascii("long"), [0x13] + bigEndian(UInt64(bitPattern: -42), size: 8),
        ascii("float"), [0x22] + bigEndian(UInt64(Float(1.5).bitPattern), size: 4),
        ascii("double"), [0x23] + bigEndian(Double(-0.25).bitPattern, size: 8),
        ascii("utf16"), [0x62, 0x00, 0xE9, 0x00, 0x74],
        ascii("longString"), ascii("com.contoso.a-bundle-id-longer-than-fifteen"),
        ascii("date"), [0x33] + bigEndian(0, size: 8),
        ascii("nested"), dictionary(keys: [21], values: [22]),
        ascii("inner"), [0x11, 0x01, 0x00],
        ascii("deep"), dictionary(keys: [25], values: [26]),
        ascii("k"), dictionary(keys: [], values: []),
    ]

    @Test func readsEveryValueTypeItSupports() throws {
        let top = try BinaryPlist.topDictionary(Self.document(Self.everyType))
        #expect(top["yes"] == .bool(true))
        #expect(top["no"] == .bool(false))
        #expect(top["byte"] == .int(127))
        #expect(top["long"] == .int(-42))
        #expect(top["float"] == .real(1.5))
        #expect(top["double"] == .real(-0.25))
        #expect(top["utf16"] == .string("\u{e9}t"))
        #expect(top["longString"] == .string("com.contoso.a-bundle-id-longer-than-fifteen"))
        #expect(top["date"] == .other)
        #expect(top["nested"] == .dictionary(["inner": .int(256)]))
        // Only one nested level is read: a dictionary inside a nested one is not walked.
        #expect(top["deep"] == .dictionary(["k": .other]))
        #expect(top.count == 11)
    }

    @Test func readsWhatFoundationWrites() throws {
        let object: [String: Any] = [
            "CFBundleIdentifier": "com.contoso.teams", "count": 70_000, "ratio": 0.75, "flag": true,
            "IntuneMAMSettings": ["MAMTelemetryUsePPE": "YES", "tries": -3],
            "list": [1, 2], "blob": Data([1, 2, 3]),
        ]
        let bytes = [UInt8](try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0))
        let top = try BinaryPlist.topDictionary(bytes)
        #expect(top["CFBundleIdentifier"] == .string("com.contoso.teams"))
        #expect(top["count"] == .int(70_000))
        #expect(top["ratio"] == .real(0.75))
        #expect(top["flag"] == .bool(true))
        #expect(top["IntuneMAMSettings"] == .dictionary(["MAMTelemetryUsePPE": .string("YES"), "tries": .int(-3)]))
        #expect(top["list"] == .other && top["blob"] == .other)
    }

    /// Every prefix of a valid document is refused with `Malformed` (the trailer is gone or
    /// points past the end), and so is every single-byte change to the trailer's sizes,
    /// counts and offsets that makes them inconsistent.
    @Test func truncatedDocumentsAreRefused() throws {
        let whole = Self.document(Self.everyType)
        for length in 0..<whole.count {
            #expect(throws: BinaryPlist.Malformed.self, "prefix of \(length) bytes") {
                try BinaryPlist.topDictionary(Array(whole.prefix(length)))
            }
        }
    }

    @Test func damagedTrailersAndOffsetsAreRefused() throws {
        let whole = Self.document(Self.everyType)
        let trailer = whole.count - 32
        var damaged: [(String, [UInt8])] = []
        func with(_ name: String, _ change: (inout [UInt8]) -> Void) {
            var copy = whole
            change(&copy)
            damaged.append((name, copy))
        }
        with("version 01") { $0[7] = UInt8(ascii: "1") }
        with("offset size 0") { $0[trailer + 6] = 0 }
        with("offset size 9") { $0[trailer + 6] = 9 }
        with("reference size 0") { $0[trailer + 7] = 0 }
        with("no objects") { $0[trailer + 15] = 0 }
        with("object count past the table") { $0[trailer + 15] = 200 }
        with("top object out of range") { $0[trailer + 23] = 27 }
        with("table offset past the trailer") { $0[trailer + 31] = 0xFF }
        with("table offset into the header") { $0[trailer + 31] = 2 }
        with("object offset past the table") { $0[trailer - 27] = 0xFF }
        with("object offset into the header") { $0[trailer - 27] = 3 }
        with("dictionary reference out of range") { $0[9] = 0x7F }
        with("dictionary count past the end") {
            $0[8] = 0xDF
            $0.insert(contentsOf: [0x10, 0xFF], at: 9)
        }
        with("extended length without an int") { $0[8] = 0xDF }
        for (name, bytes) in damaged {
            #expect(throws: BinaryPlist.Malformed.self, "\(name)") { try BinaryPlist.topDictionary(bytes) }
        }
        // A top level that is not a dictionary is refused too.
        #expect(throws: BinaryPlist.Malformed.self) { try BinaryPlist.topDictionary(Self.document([Self.ascii("top")])) }
    }

    /// A string whose length runs past the object area, and a nested dictionary whose
    /// references leave the table, are refused rather than read out of bounds.
    @Test func lengthsAndReferencesPastTheEndAreRefused() throws {
        let longString = Self.document([
            Self.dictionary(keys: [1], values: [2]), Self.ascii("s"), [0x5F, 0x10, 0xF0] + Array("short".utf8),
        ])
        #expect(throws: BinaryPlist.Malformed.self) { try BinaryPlist.topDictionary(longString) }
        let longUTF16 = Self.document([Self.dictionary(keys: [1], values: [2]), Self.ascii("s"), [0x6F, 0x10, 0x40, 0x00, 0x41]])
        #expect(throws: BinaryPlist.Malformed.self) { try BinaryPlist.topDictionary(longUTF16) }
        let badNested = Self.document([Self.dictionary(keys: [1], values: [2]), Self.ascii("n"), Self.dictionary(keys: [9], values: [9])])
        #expect(throws: BinaryPlist.Malformed.self) { try BinaryPlist.topDictionary(badNested) }
    }
}
