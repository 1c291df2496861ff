import TestSupport
import Testing

@testable import TelemetryModel

/// The quick pass that lets every canonically stored record skip the repair walk
/// (`CanonicalJSON.mayNeedRepair`) reads strings eight bytes at a time. Generated texts, with
/// quotes, backslashes, `\uD…` escapes, digits and exponents planted anywhere (around the
/// eight-byte steps, at both ends, after non-ASCII bytes), must get the answer of the
/// byte-at-a-time definition below, and the word search must find what a plain search finds
/// from every starting offset.
@Suite struct RepairScreenTests {
    /// The screen's definition, one byte at a time: a string holding `\uD` or `\ud`, or, outside
    /// strings, a number with an exponent or more than 300 digits.
    static func definition(_ b: [UInt8]) -> Bool {
        var i = 0
        var digits = 0
        while i < b.count {
            let c = b[i]
            if c == 0x22 {
                digits = 0
                i += 1
                while i < b.count, b[i] != 0x22 {
                    if b[i] == 0x5C {
                        if i + 2 < b.count, b[i + 1] == UInt8(ascii: "u"), b[i + 2] | 0x20 == UInt8(ascii: "d") { return true }
                        i += 2
                    } else {
                        i += 1
                    }
                }
                i += 1
                continue
            }
            if c >= 0x30 && c <= 0x39 {
                digits += 1
                if digits > 300 { return true }
            } else {
                if c | 0x20 == UInt8(ascii: "e"), digits > 0 { return true }
                digits = 0
            }
            i += 1
        }
        return false
    }

    /// Bytes weighted towards the ones the screen looks at.
    static let alphabet: [UInt8] = Array(#""""\\\u d D e E 0 9 1 { } : , a z"#.utf8) + [0x00, 0x7F, 0x80, 0xA2, 0xDC, 0xFF]

    static func text(_ random: inout SeededRandom) -> [UInt8] {
        let length = random.below(4) == 0 ? random.below(700) : random.below(40)
        var out: [UInt8] = []
        while out.count < length {
            switch random.below(10) {
            case 0: out += Array(#"\uD83D"#.utf8)
            case 1: out += Array(repeating: UInt8(ascii: "7"), count: 295 + random.below(10))
            case 2: out += Array(#"{"durationMs":12e3,"m":"x"}"#.utf8)
            case 3: out += (0..<random.below(20)).map { _ in UInt8(ascii: "a") + UInt8(random.below(26)) }
            default: out.append(random.pick(Self.alphabet))
            }
        }
        return out
    }

    @Test func screenAgreesWithItsDefinition() {
        var random = SeededRandom(seed: 0xC0DE_0051)
        var positives = 0
        for _ in 0..<40_000 {
            let text = Self.text(&random)
            let expected = Self.definition(text)
            positives += expected ? 1 : 0
            let got = text.withUnsafeBufferPointer(CanonicalJSON.mayNeedRepair)
            #expect(got == expected, "\(String(decoding: text, as: UTF8.self).debugDescription)")
            if got != expected { return }
        }
        // Both answers are exercised, not only one.
        #expect(positives > 4_000 && positives < 36_000, "\(positives) of 40000 texts may need repair")
    }

    @Test func wordSearchFindsWhatAPlainSearchFinds() {
        var random = SeededRandom(seed: 0x5EA7_C400)
        for _ in 0..<1_000 {
            let text = Self.text(&random)
            text.withUnsafeBufferPointer { b in
                for start in 0...b.count {
                    let plain = b[start...].firstIndex { $0 == 0x22 || $0 == 0x5C } ?? b.count
                    #expect(ByteWords.quoteOrBackslash(b, from: start) == plain)
                }
            }
        }
        // An empty buffer has no base address.
        var nonASCII = false
        #expect(ByteWords.stringSpecial(UnsafeBufferPointer(start: nil, count: 0), from: 0, nonASCII: &nonASCII) == 0)
        #expect(ByteWords.quoteOrBackslash(UnsafeBufferPointer(start: nil, count: 0), from: 0) == 0)
    }

    /// The string scanner's step: the first `"`, `\` or control byte, found eight bytes at a
    /// time, and whether a byte at or above 0x80 was passed over.
    @Test func stringStepStopsWhereAByteLoopWould() {
        var random = SeededRandom(seed: 0x57E9_0000)
        for _ in 0..<1_000 {
            var text = Self.text(&random)
            for _ in 0..<random.below(3) where !text.isEmpty { text[random.below(text.count)] = UInt8(random.below(0x20)) }
            text.withUnsafeBufferPointer { b in
                for start in 0...b.count {
                    let special = b[start...].firstIndex { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }
                    var expected = start
                    while expected + 8 <= b.count {
                        if let special, special < expected + 8 {
                            expected = special
                            break
                        }
                        expected += 8
                    }
                    var nonASCII = false
                    let got = ByteWords.stringSpecial(b, from: start, nonASCII: &nonASCII)
                    #expect(got == expected)
                    if b[start..<got].contains(where: { $0 >= 0x80 }) { #expect(nonASCII, "a byte over 0x7F was passed over unnoted") }
                    // Over-inclusive only within the step that stopped.
                    if nonASCII { #expect(b[start..<min(b.count, got + 8)].contains { $0 >= 0x80 }) }
                }
            }
        }
    }
}
