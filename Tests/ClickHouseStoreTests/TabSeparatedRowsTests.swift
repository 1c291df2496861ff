import TestSupport
import Testing

@testable import ClickHouseStore

/// The reader's splitter and integer parser against plain oracles (split at newlines, then at
/// tabs; `Int64(String)`) on generated answers, hostile fields and near-miss integers.
@Suite struct TabSeparatedRowsTests {
    /// The first implementation, kept as the oracle: split lines, then tabs.
    static func oracle(_ bytes: [UInt8], columns: Int) -> [[ArraySlice<UInt8>]]? {
        var rows: [[ArraySlice<UInt8>]] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.endIndex
            let fields = bytes[start..<end].split(separator: 0x09, omittingEmptySubsequences: false)
            guard fields.count == columns else { return nil }
            rows.append(fields)
            start = end + 1
        }
        return rows
    }

    @Test func generatedAnswersSplitAsTheOracleSplitsThem() {
        var rng = SeededRandom(seed: PropertyScale.seed(0x7473_7277))
        for _ in 0..<PropertyScale.cases(3000) {
            let columns = 1 + rng.below(16)
            var answer: [UInt8] = []
            for _ in 0..<rng.below(6) {
                // Mostly well-formed rows; sometimes one field too few or too many.
                let fieldCount = rng.below(8) == 0 ? max(1, columns + rng.below(3) - 1) : columns
                for f in 0..<fieldCount {
                    if f > 0 { answer.append(0x09) }
                    var w = TabSeparatedWriter(capacity: 16)
                    w.string(bytes: HostileBytes.bytes(&rng)[...])
                    answer += w.bytes.filter { $0 != 0x0A }
                }
                answer.append(0x0A)
            }
            if rng.below(5) == 0, answer.last == 0x0A { answer.removeLast() }
            let expected = Self.oracle(answer, columns: columns)
            let parsed = try? TabSeparatedRows(answer, columns: columns)
            #expect((parsed == nil) == (expected == nil), "\(answer) with \(columns) columns")
            if let parsed, let expected {
                #expect(parsed.count == expected.count)
                #expect(parsed.rows.map { $0.map(Array.init) } == expected.map { $0.map(Array.init) })
                for r in 0..<parsed.count {
                    for c in 0..<columns { #expect(Array(parsed.field(r, c)) == Array(expected[r][c])) }
                }
            }
        }
    }

    @Test func integersReadAsInt64ReadsTheirText() {
        var rng = SeededRandom(seed: PropertyScale.seed(0x696E_74))
        let alphabet = Array("0123456789-+ .eN\\x".utf8)
        var texts = [
            "0", "-0", "7", "-7", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
            "", "-", "+1", "1-", "00012", "1e3", "\\N", " 1", "18446744073709551616", "99999999999999999999",
        ]
        for _ in 0..<PropertyScale.cases(4000) {
            switch rng.below(3) {
            case 0: texts.append(String(Int64(bitPattern: rng.next())))
            case 1: texts.append(String(decoding: (0..<rng.below(22)).map { _ in rng.pick(alphabet) }, as: UTF8.self))
            default:
                let digits = (0..<1 + rng.below(20)).map { _ in UInt8(0x30 + rng.below(10)) }
                texts.append((rng.below(2) == 0 ? "-" : "") + String(decoding: digits, as: UTF8.self))
            }
        }
        for text in texts {
            let bytes = Array(text.utf8)
            #expect((try? TabSeparatedRows.int(bytes[...])) == Int64(text), "\(text)")
        }
    }
}
