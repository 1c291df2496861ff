import Foundation
import TestSupport
import Testing
import TextExportReference

@testable import TelemetryModel

/// Console-export text read as the README documents it: every common shape of an entry's
/// first line, and continuation lines joined to their entry (one record, its level and time).
/// The audit's line `… [ComMail[512]] WARNING [MAMPolicyManager] No policy cached` was stored
/// as `info` with component `ComMail[512`, and a multi-line verbose entry's other lines became
/// `info` records with the raw text and the receive time. The oracle is an independent
/// reading of the same rules (`TextExportReference`), which `FuzzTextLog` also holds the
/// product to.
@Suite struct TextExportTests {
    typealias Entry = TextExportReference.Entry

    static func product(_ body: [UInt8], maxEntryBytes: Int = 65_536) -> (entries: [Entry], rejectedLines: [Int]) {
        let (entries, rejected) = TextExport.entries(body, maxEntryBytes: maxEntryBytes)
        return (
            entries.map { Entry(line: $0.line, time: $0.time, level: $0.level, component: $0.component, message: $0.message) },
            rejected.map(\.line)
        )
    }

    static func product(_ text: String, maxEntryBytes: Int = 65_536) -> [Entry] {
        product(Array(text.utf8), maxEntryBytes: maxEntryBytes).entries
    }

    static func reference(_ text: String, maxEntryBytes: Int = 65_536) -> [Entry] {
        TextExportReference.entries(Array(text.utf8), maxEntryBytes: maxEntryBytes).entries
    }

    static func header(_ line: String) -> TextLogLine.Header? { TextLogLine.header(line[...]) }

    static var runs: Int { ProcessInfo.processInfo.environment["TEXT_EXPORT_RUNS"].flatMap(Int.init) ?? 400 }

    @Test func theDocumentedShapesAreRead() throws {
        let cases: [(String, LogLevel, String?, String, String)] = [
            (
                "2026-11-26T15:58:11Z [ComMail[512]] WARNING [MAMPolicyManager] No policy cached", .warning, "MAMPolicyManager",
                "No policy cached", "2026-11-26T15:58:11Z"
            ),
            (
                "2026-11-21T10:15:30.123Z [WARNING] [PolicyManager] Policy check-in failed", .warning, "PolicyManager",
                "Policy check-in failed", "2026-11-21T10:15:30.123Z"
            ),
            (
                "2026-11-21 10:15:30.123 INFO IntuneMAM: enrollment started", .info, "IntuneMAM", "enrollment started",
                "2026-11-21T10:15:30.123Z"
            ),
            (
                "2026-11-21 10:15:30.123456+0000 MyApp[412:9921] <Error> [Enrollment] token expired", .error, "Enrollment", "token expired",
                "2026-11-21T10:15:30.123Z"
            ),
            ("2026-11-21T10:15:30Z verbose user signed in", .verbose, nil, "user signed in", "2026-11-21T10:15:30Z"),
            (
                "2026-11-21T11:15:30,5+01:00 [ComMail[512:7]] error: [Sync[v2]] failed: [x]", .error, "Sync[v2]", "failed: [x]",
                "2026-11-21T10:15:30.500Z"
            ),
            ("2026-11-21 10:15:30-0800 [Outlook] Warn [Net] slow", .warning, "Net", "slow", "2026-11-21T18:15:30Z"),
            ("2026-11-21t10:15:30z <Fault> MSAL.iOS: crash", .error, "MSAL.iOS", "crash", "2026-11-21T10:15:30Z"),
            ("2026-11-21T10:15:30Z [Comp] no level here", .info, "Comp", "no level here", "2026-11-21T10:15:30Z"),
            ("2026-11-21T10:15:30Z Result[0] is nil", .info, nil, "Result[0] is nil", "2026-11-21T10:15:30Z"),
            ("2026-11-21T10:15:30Z E x", .info, nil, "E x", "2026-11-21T10:15:30Z"),
            ("2026-11-21T10:15:30Z WARNINGS are words", .info, nil, "WARNINGS are words", "2026-11-21T10:15:30Z"),
        ]
        for (line, level, component, message, time) in cases {
            let h = try #require(Self.header(line), "\(line)")
            #expect(h.level == level && h.component == component && h.message == message, "\(line) -> \(h)")
            #expect(h.time == Timestamp.parse(time), "\(line)")
            let reference = try #require(TextExportReference.header(line))
            #expect(reference.level == level && reference.component == component && reference.message == message, "reference: \(line)")
            #expect(reference.time == h.time)
        }
        for notAnEntry in [
            "no timestamp", " 2026-11-21T10:15:30Z indented", "2026-11-21T10:15:30Zoops", "2026-11-21 10:15", "2026-11-21T10:15:30.x",
        ] {
            #expect(Self.header(notAnEntry) == nil, "\(notAnEntry)")
        }
    }

    /// Seeded documents in every shape: the product, the independent reference and the
    /// generator's own account of each entry agree, record by record.
    @Test func generatedExportsReadAsTheReferenceSays() {
        let runs = Self.runs
        var generator = TextExportGenerator(rng: SeededRandom(seed: 0x7E47))
        var entries = 0
        for run in 0..<runs {
            let document = generator.document(entries: 1 + run % 12)
            let product = Self.product(document.text)
            let reference = Self.reference(document.text)
            #expect(product == reference, "run \(run):\n\(document.text.debugDescription)\nproduct \(product)\nreference \(reference)")
            #expect(
                product == document.expected,
                "run \(run):\n\(document.text.debugDescription)\nproduct \(product)\nexpected \(document.expected)")
            if product != reference || product != document.expected { break }
            entries += product.count
        }
        #expect(entries > runs * 3)
    }

    /// Generated exports damaged byte by byte (separators, brackets, level words, combining
    /// marks, bytes that are not UTF-8 inserted; bytes deleted): the product reads exactly what
    /// the reference reads, and each stored record is JSON whose message is the entry's, byte
    /// for byte.
    @Test func damagedExportsReadAsTheReferenceSays() throws {
        var generator = TextExportGenerator(rng: SeededRandom(seed: 0xDA3A6E))
        var compared = 0
        for run in 0..<Self.runs {
            let document = generator.document(entries: 1 + run % 8)
            let body = generator.mutate(document.text, edits: 1 + run % 12)
            let limit = run % 3 == 0 ? 80 : 65_536
            let product = Self.product(body, maxEntryBytes: limit)
            let reference = TextExportReference.entries(body, maxEntryBytes: limit)
            let same = product.entries == reference.entries && product.rejectedLines == reference.rejectedLines
            #expect(
                same,
                "run \(run):\n\(String(decoding: body, as: UTF8.self).debugDescription)\nproduct \(product)\nreference \(reference)")
            guard same else { break }
            let (records, _) = try LogRecordDecoder(limits: DecodeLimits(maxLineBytes: limit)).decodeText(
                body: body, defaults: LogDefaults(appId: "com.contoso.mail"), receivedAt: 7)
            try #require(records.count == product.entries.count)
            for (record, entry) in zip(records, product.entries) {
                let object = try JSONSerialization.jsonObject(with: Data(record.json)) as? [String: Any]
                #expect((object?["message"] as? String)?.utf8.elementsEqual(entry.message.utf8) == true, "run \(run): \(entry)")
                #expect(record.keys.level == entry.level && record.keys.time == entry.time ?? 7)
            }
            compared += product.entries.count
        }
        #expect(compared > Self.runs * 2)
    }

    /// An entry longer than the limit is cut at line ends into records of the entry's time,
    /// level and component; a single line over it is refused by number; nothing else is lost.
    @Test func longEntriesAreCutAtLineEnds() {
        var generator = TextExportGenerator(rng: SeededRandom(seed: 0xC07))
        var (refused, cut) = (0, 0)
        for run in 0..<200 {
            let document = generator.document(entries: 6)
            let limit = 60 + run % 120
            let body = Array(document.text.utf8)
            let product = Self.product(body, maxEntryBytes: limit)
            let reference = TextExportReference.entries(body, maxEntryBytes: limit)
            #expect(product.entries == reference.entries, "run \(run) limit \(limit):\n\(document.text.debugDescription)")
            #expect(product.rejectedLines == reference.rejectedLines, "run \(run) limit \(limit)")
            #expect(product.entries.allSatisfy { $0.message.utf8.count <= limit })
            refused += product.rejectedLines.count
            cut += product.entries.count - document.expected.count + product.rejectedLines.count
        }
        // The limits were tight enough to matter: lines refused and entries cut.
        #expect(refused > 20 && cut > 20, "refused \(refused), cut \(cut)")
        let text =
            "2026-11-21T10:00:00Z verbose [Auth] start\n" + (1...30).map { "  frame \($0)" }.joined(separator: "\n")
            + "\n" + String(repeating: "x", count: 300) + "\nlast"
        let (entries, rejected) = TextExport.entries(Array(text.utf8), maxEntryBytes: 100)
        #expect(rejected.map(\.line) == [32] && rejected.first?.error.contains("maxLineBytes=100") == true)
        #expect(entries.count > 3 && entries.allSatisfy { $0.level == .verbose && $0.component == "Auth" && $0.time == entries[0].time })
        #expect(entries.allSatisfy { $0.message.utf8.count <= 100 })
        #expect(
            entries.map(\.message).joined(separator: "\n")
                == (["start"] + (1...30).map { "  frame \($0)" } + ["last"]).joined(separator: "\n"))
    }

    /// What ingest stores: one record per entry, the entry's level (a verbose entry's pasted
    /// token is in a verbose record) and time; text before the first entry is `info` at the
    /// receive time; line numbers name where each record starts.
    @Test func recordsCarryTheirEntrysLevelAndTime() throws {
        let body = """
            exported by the diagnostic console
            2026-11-21T10:15:30Z [ComMail[512]] VERBOSE [MSAL] token response:
            HTTP/1.1 200 OK
            {"refresh_token":"0.AXoA-secret","phone":"+1 425 555 0100"}

            2026-11-21T10:15:31Z [ComMail[512]] ERROR [Enrollment] failed

            """
        let (records, rejected) = try LogRecordDecoder().decodeText(
            body: Array(body.utf8), defaults: LogDefaults(appId: "com.contoso.mail", deviceId: "d"), receivedAt: 7)
        #expect(rejected.isEmpty)
        #expect(records.map(\.line) == [1, 2, 6])
        #expect(records.map(\.keys.level) == [.info, .verbose, .error])
        #expect(records.map(\.keys.time) == [7, Timestamp.parse("2026-11-21T10:15:30Z")!, Timestamp.parse("2026-11-21T10:15:31Z")!])
        #expect(
            records[1].message == "token response:\nHTTP/1.1 200 OK\n{\"refresh_token\":\"0.AXoA-secret\",\"phone\":\"+1 425 555 0100\"}")
        #expect(records[0].message == "exported by the diagnostic console")
        #expect(records[2].keys.detail == "Enrollment")
    }
}
