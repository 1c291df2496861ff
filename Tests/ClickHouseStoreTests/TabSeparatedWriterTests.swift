import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore

/// Hostile bytes for `TabSeparated` fields: the format's own separators and escape, NUL,
/// carriage return, `\N` (NULL's spelling), and bytes that are not UTF-8.
enum HostileBytes {
    static let fragments: [[UInt8]] = [
        [0x09], [0x0A], [0x0D], [0x00], [0x5C], Array("\\N".utf8), Array("\\t".utf8), [0xFF], [0xC3], [0x80, 0xBF],
        Array("é".utf8), Array("\"".utf8), Array("'".utf8), Array("a".utf8), Array("N".utf8), Array("{\"k\":1}".utf8),
    ]

    /// Up to `maxParts` fragments or random bytes, joined.
    static func bytes(_ rng: inout SeededRandom, maxParts: Int = 12) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<rng.below(maxParts + 1) {
            if rng.below(4) == 0 { out.append(UInt8(truncatingIfNeeded: rng.next())) } else { out += rng.pick(fragments) }
        }
        return out
    }

    /// The same, as a Swift string (which repairs invalid UTF-8, as every key column's source does).
    static func string(_ rng: inout SeededRandom) -> String { String(decoding: bytes(&rng), as: UTF8.self) }
}

@Suite struct TabSeparatedWriterTests {
    @Test func everyGeneratedFieldReadsBackAsItsBytesInItsOwnColumn() throws {
        var rng = SeededRandom(seed: PropertyScale.seed(0x7473_7677))
        for _ in 0..<PropertyScale.cases(2000) {
            let fields = (0..<1 + rng.below(6)).map { _ in rng.below(5) == 0 ? nil : HostileBytes.bytes(&rng) }
            var w = TabSeparatedWriter(capacity: 64)
            for field in fields {
                if let field { w.string(bytes: field[...]) } else { w.null() }
            }
            w.endRow()
            #expect(w.bytes.last == 0x0A)
            #expect(!w.bytes.dropLast().contains(0x0A) && !w.bytes.contains(0x0D) && !w.bytes.contains(0x00))
            let rows = try TabSeparatedRows(w.bytes, columns: fields.count)
            #expect(rows.rows.count == 1)
            for (field, written) in zip(rows.rows[0], fields) {
                if let written {
                    #expect(!TabSeparatedRows.isNull(field) && TabSeparatedRows.bytes(field) == written, "\(written)")
                } else {
                    #expect(TabSeparatedRows.isNull(field))
                }
            }
        }
    }

    @Test func integersAtTheEdgesOfInt64AreWrittenAsTheirDigits() throws {
        var rng = SeededRandom(seed: PropertyScale.seed(64))
        let values: [Int64] =
            [0, -1, 9, 10, .max, .min, .min + 1] + (0..<PropertyScale.cases(500)).map { _ in Int64(bitPattern: rng.next()) }
        for v in values {
            var w = TabSeparatedWriter(capacity: 24)
            w.int(v)
            w.endRow()
            #expect(w.bytes == Array("\(v)\n".utf8))
        }
    }
}
