import Foundation
import TestSupport
import Testing

@testable import Privacy

/// `WithheldText.isMarker` checks bytes for speed; the pattern it implements, written as the
/// regex it replaced, is the oracle. Generated near-misses (real markers with one edit:
/// a byte changed, inserted or removed, a case flipped, a combining mark, text around it)
/// and real markers must get the same answer from both.
@Suite struct WithheldTextTests {
    static func oracle(_ text: String) -> Bool {
        text.wholeMatch(of: /\[withheld: [0-9]+ chars, text-[0-9a-f]{24}\]/) != nil
    }

    @Test func markersAndNearMissesAgreeWithThePattern() {
        var random = SeededRandom(seed: PropertyScale.seed(0x57_17_44))
        let edits: [String] = ["0", "9", "a", "f", "g", "A", "F", "]", "[", " ", "-", ":", ",", "\u{301}", "é", "\u{0}", "\n", "１"]
        var markers = 0
        for _ in 0..<PropertyScale.cases(3_000) {
            let length = random.below(3) == 0 ? random.below(12) : random.below(20_000)
            let text = String(repeating: "x", count: length)
            var candidate = Array(WithheldText.marker(for: text, pseudonymizer: RedactionFixtures.pseudonymizer).unicodeScalars)
            switch random.below(7) {
            case 0: break
            case 1: candidate[random.below(candidate.count)] = random.pick(edits).unicodeScalars.first!
            case 2: candidate.insert(random.pick(edits).unicodeScalars.first!, at: random.below(candidate.count + 1))
            case 3: candidate.remove(at: random.below(candidate.count))
            case 4: candidate = Array(String(String.UnicodeScalarView(candidate)).uppercased().unicodeScalars)
            case 5: candidate.append(contentsOf: random.pick(edits).unicodeScalars)
            default: candidate.insert(contentsOf: random.pick(edits).unicodeScalars, at: 0)
            }
            let shown = String(String.UnicodeScalarView(candidate))
            let expected = Self.oracle(shown)
            if expected { markers += 1 }
            #expect(WithheldText.isMarker(shown) == expected, "\(shown.debugDescription)")
        }
        // Both answers occur often enough for the comparison to mean something.
        #expect(markers > PropertyScale.cases(3_000) / 10)
        #expect(markers < PropertyScale.cases(3_000) * 9 / 10)
    }

    @Test func randomTextIsNotAMarker() {
        var random = SeededRandom(seed: PropertyScale.seed(0x57_17_45))
        let alphabet = Array("[withheld: 0123456789 chars, text-abcdef]é\u{301}".unicodeScalars)
        for _ in 0..<PropertyScale.cases(2_000) {
            let text = String(String.UnicodeScalarView((0..<random.below(60)).map { _ in random.pick(alphabet) }))
            #expect(WithheldText.isMarker(text) == Self.oracle(text), "\(text.debugDescription)")
        }
    }
}
