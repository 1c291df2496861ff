import TestSupport
import Testing

@testable import TelemetryStore

/// The batch encoders' string tables decide which spelling is stored: two strings share an
/// entry only when their UTF-8 bytes are the same. Checked against `[UInt8]` as the oracle on
/// generated strings that include canonically equivalent spellings (which Swift's `String`
/// calls equal), prefixes of each other, empty strings and non-ASCII.
@Suite struct ExactTextTests {
    /// Pieces that combine into look-alike strings: precomposed and decomposed é, a prefix and
    /// its extension, ASCII case, a NUL byte, astral code points.
    static let pieces = ["e", "é", "e\u{301}", "E", "ab", "a", "\u{0}", "😀", "ß", "ss", "-", ""]

    static func generated(_ random: inout SeededRandom) -> String {
        (0..<random.below(5)).map { _ in random.pick(pieces) }.joined()
    }

    @Test func equalityAndHashFollowTheBytes() {
        var random = SeededRandom(seed: 0x5EED_E7AC)
        for _ in 0..<20_000 {
            let a = Self.generated(&random)
            let b = random.below(4) == 0 ? a : Self.generated(&random)
            let sameBytes = Array(a.utf8) == Array(b.utf8)
            #expect((ExactText(a) == ExactText(b)) == sameBytes, "\(Array(a.utf8)) vs \(Array(b.utf8))")
            if sameBytes { #expect(ExactText(a).hashValue == ExactText(b).hashValue) }
        }
    }

    /// `indexInserting` is a string table: the first spelling gets the next index, every later
    /// use of the same bytes gets that index back, and the table holds each spelling once.
    @Test func indexInsertingNumbersEachSpellingOnce() {
        var random = SeededRandom(seed: 0x7AB1E)
        var table: [ExactText: Int] = [:]
        var oracle: [[UInt8]: Int] = [:]
        for _ in 0..<20_000 {
            let s = Self.generated(&random)
            let expected = oracle[Array(s.utf8)] ?? oracle.count
            oracle[Array(s.utf8)] = expected
            #expect(table.indexInserting(ExactText(s), next: table.count) == expected)
        }
        #expect(table.count == oracle.count)
        #expect(oracle.count > 100, "the generator repeats spellings and makes many")
    }
}
