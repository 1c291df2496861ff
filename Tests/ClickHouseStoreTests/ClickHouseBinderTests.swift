import ClickHouseStore
import Foundation
import TestSupport
import Testing

/// The one binder every value goes through: adversarial strings must come back from the
/// server byte for byte and never change the statement around them.
@Suite struct ClickHouseBinderTests {
    static let adversarial: [String] = [
        "plain", "", "it's", "'; DROP TABLE records; --", "back\\slash", "\\'", "trailing\\", "nul\0byte", "new\nline\r\ttab",
        "\u{1}\u{1f}\u{7f}", "日本語 ✓ 🙂", "{x:String}", "?", "$1", "%27", "\\x41", "\\N", "''''",
    ]

    @Test func literalsEscapeEveryByteThatCouldEndOrChangeAString() {
        #expect(ClickHouseValue.string("it's").literal == #"'it\'s'"#)
        #expect(ClickHouseValue.string("a\\b").literal == #"'a\\b'"#)
        #expect(ClickHouseValue.string("nul\0").literal == #"'nul\x00'"#)
        #expect(ClickHouseValue.string("l1\nl2").literal == #"'l1\x0Al2'"#)
        #expect(ClickHouseValue.string("'; DROP TABLE t; --").literal == #"'\'; DROP TABLE t; --'"#)
        #expect(ClickHouseValue.bytes([0x61, 0xFF, 0xC3]).literal == #"'a\xFF\xC3'"#)
        #expect(ClickHouseValue.int(Int64.min).literal == "-9223372036854775808")
        #expect(ClickHouseValue.uint(UInt64.max).literal == "18446744073709551615")
        #expect(ClickHouseValue.float(.nan).literal == "nan")
        #expect(ClickHouseValue.stringArray(["a'", "b"]).literal == #"['a\'', 'b']"#)
        for s in Self.adversarial {
            let literal = ClickHouseValue.string(s).literal
            // Between the outer quotes, every quote is escaped and no raw control byte remains.
            let inner = Array(literal.utf8.dropFirst().dropLast())
            for (i, b) in inner.enumerated() where b == UInt8(ascii: "'") {
                var backslashes = 0
                var j = i - 1
                while j >= 0, inner[j] == UInt8(ascii: "\\") {
                    backslashes += 1
                    j -= 1
                }
                #expect(backslashes % 2 == 1, "unescaped quote in \(literal)")
            }
            #expect(!inner.contains { $0 < 0x20 || $0 == 0x7F })
        }
    }

    @Test func interpolationBindsValuesAndPlaceholdersCarryTypes() {
        let app = "x' OR '1'='1"
        let sql: ClickHouseSQL = "SELECT count() FROM \(identifier: "mam").records WHERE app = \(app) AND time >= \(Int64(5))"
        #expect(sql.inlined() == #"SELECT count() FROM mam.records WHERE app = 'x\' OR \'1\'=\'1' AND time >= 5"#)
        let (text, parameters) = sql.parameterized()
        #expect(text == "SELECT count() FROM mam.records WHERE app = {p0:String} AND time >= {p1:Int64}")
        #expect(parameters.map(\.value) == [app, "5"])
        #expect(ClickHouseSQL.joined(["a = \(1)", "b = \("x")"], separator: " AND ").inlined() == "a = 1 AND b = 'x'")
        #expect(ClickHouseIdentifier.isValid("mam_ppe"))
        #expect(!ClickHouseIdentifier.isValid("mam; DROP"))
        #expect(!ClickHouseIdentifier.isValid("1abc"))
        #expect(!ClickHouseIdentifier.isValid(""))
    }

    /// The real 18.16 parser reads every adversarial literal back to the same bytes, and the
    /// statement keeps its shape (one row, one column: nothing was injected).
    @Test(.enabled(if: PrivateClickHouse.isInstalled)) func serverReadsEveryLiteralBackByteForByte() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let client = ClickHouseClient(configuration: .init(endpoints: server.urls))
        defer { Task { try? await client.shutdown() } }
        #expect(try await client.supportsParameters() == false)
        for s in Self.adversarial {
            let answer = try await client.execute("SELECT hex(\(s)) FORMAT TSV")
            let expected = Array(s.utf8).map { String(format: "%02X", $0) }.joined()
            #expect(String(decoding: answer, as: UTF8.self) == expected + "\n", "round trip of \(s.debugDescription)")
        }
        let invalid: [UInt8] = [0x41, 0xFF, 0xFE, 0x00, 0x27, 0x5C, 0xC3]
        let answer = try await client.execute("SELECT hex(\(ClickHouseValue.bytes(invalid))) FORMAT TSV")
        #expect(String(decoding: answer, as: UTF8.self) == "41FFFE00275CC3\n")
        let arrays = try await client.execute("SELECT length(\(Self.adversarial)) FORMAT TSV")
        #expect(String(decoding: answer.isEmpty ? [] : arrays, as: UTF8.self) == "\(Self.adversarial.count)\n")
    }
}
