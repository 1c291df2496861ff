import Foundation
import Systemd
import TelemetryModel
import Testing

/// `systemd/mamtelemetryd.catalog` must compile with journald's own catalog tool and
/// explain every `MESSAGE_ID` the daemon sends (`journalctl -x` shows it next to them).
@Suite("journald catalog")
struct CatalogTests {
    static let catalog = repositoryRoot.appendingPathComponent("systemd/mamtelemetryd.catalog")

    /// The documented way to build a catalog database elsewhere than the host's:
    /// `journalctl --root=DIR --update-catalog` reads `DIR/usr/lib/systemd/catalog/*.catalog`
    /// and writes `DIR/var/lib/systemd/catalog/database`; `--list-catalog` / `--dump-catalog`
    /// with the same `--root` read it back. The host's catalog is never touched.
    @Test("journalctl --update-catalog accepts it and lists every DaemonMessageID")
    func compilesAndCoversEveryID() throws {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("mamtelemetryd-catalog-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let catalogDirectory = root.appendingPathComponent("usr/lib/systemd/catalog")
        try FileManager.default.createDirectory(at: catalogDirectory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Self.catalog, to: catalogDirectory.appendingPathComponent("mamtelemetryd.catalog"))

        let update = try runProcess("/usr/bin/journalctl", ["--root=\(root.path)", "--update-catalog"])
        #expect(update.status == 0, "\(update.standardError)")
        #expect(update.standardError.isEmpty, "journalctl complained: \(update.standardError)")
        #expect(
            FileManager.default.fileExists(atPath: root.appendingPathComponent("var/lib/systemd/catalog/database").path))

        let list = try runProcess("/usr/bin/journalctl", ["--root=\(root.path)", "--list-catalog"])
        #expect(list.status == 0, "\(list.standardError)")
        var listed: [String: String] = [:]
        for line in list.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { listed[String(parts[0])] = String(parts[1]) }
        }
        let ids = DaemonMessageID.allCases.map(\.id) + EnrollmentFailureMessageID.all
        #expect(listed.count == ids.count)
        for id in ids {
            let subject = try #require(listed[id], "no catalog entry for \(id)")
            #expect(subject.hasPrefix("mamtelemetryd: "), "\(id): Defined-By must be mamtelemetryd")
        }

        let dump = try runProcess("/usr/bin/journalctl", ["--root=\(root.path)", "--dump-catalog"] + ids)
        #expect(dump.status == 0)
        let entries = dump.standardOutput.components(separatedBy: "\n-- ").count
        #expect(entries == ids.count)
        #expect(dump.standardOutput.components(separatedBy: "Support: ").count - 1 == ids.count)
    }

    /// One entry per enrollment failure code, saying what the code means and what support does
    /// next in the words of `EnrollmentStatus.all`, so `journalctl -x` explains the daemon's
    /// failed-enrollment entries the way the API and the CLI do.
    @Test("the catalog explains every enrollment failure code as EnrollmentStatus.all does")
    func enrollmentFailureCodesAreExplained() throws {
        let text = try String(contentsOf: Self.catalog, encoding: .utf8)
        let expected = EnrollmentFailureCatalog.section()
        let start = text.range(of: EnrollmentFailureCatalog.begin)
        let end = text.range(of: EnrollmentFailureCatalog.end)
        var current: String?
        if let start, let end, start.lowerBound < end.upperBound {
            current = String(text[start.lowerBound..<end.upperBound]) + "\n"
        }
        if current != expected, ProcessInfo.processInfo.environment["MAMTELEMETRY_UPDATE_CATALOG"] == "1" {
            let kept = current.map { text.replacingOccurrences(of: $0, with: "") } ?? text
            try (kept.trimmingCharacters(in: .newlines) + "\n\n" + expected).write(to: Self.catalog, atomically: true, encoding: .utf8)
            return
        }
        #expect(current == expected, "systemd/mamtelemetryd.catalog is out of date: rerun with MAMTELEMETRY_UPDATE_CATALOG=1")
        for code in EnrollmentFailureMessageID.documentedCodes {
            guard let e = EnrollmentStatus.explanation(of: code) else {
                Issue.record("no explanation of \(code)")
                continue
            }
            #expect(!e.succeeded)
            #expect(
                expected.contains("-- \(EnrollmentFailureMessageID.id(for: code))\nSubject: Enrollment failed with \(e.name) (\(code))"))
            #expect(expected.contains("Next step: \(e.nextStep)"))
        }
    }

    /// Every `.messageID(.case)` call site in `Sources/`, by the id it sends.
    static func emittedIDs() throws -> [String: [String]] {
        let sources = repositoryRoot.appendingPathComponent("Sources")
        let byName = Dictionary(uniqueKeysWithValues: DaemonMessageID.allCases.map { ("\($0)", $0.id) })
        let callSite = try Regex(#"\.messageID\(\s*\.([A-Za-z]+)"#)
        var emitted: [String: [String]] = [:]
        for file in try swiftFiles(under: sources) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: callSite) {
                let name = String(text[match.output[1].range!])
                let id = byName[name] ?? "unknown case .\(name)"
                emitted[id, default: []].append(file.lastPathComponent)
            }
        }
        return emitted
    }

    static func swiftFiles(under directory: URL) throws -> [URL] {
        let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        return (walker?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }

    @Test("the catalog explains exactly the MESSAGE_IDs the daemon's call sites send")
    func catalogMatchesWhatTheCodeEmits() throws {
        let text = try String(contentsOf: Self.catalog, encoding: .utf8)
        let headers = text.split(separator: "\n").filter { $0.hasPrefix("-- ") }.map { String($0.dropFirst(3)) }
        #expect(headers.count == Set(headers).count, "an id appears twice in the catalog")
        let emitted = try Self.emittedIDs()
        for (id, files) in emitted where !headers.contains(id) {
            Issue.record("\(files.joined(separator: ", ")) send MESSAGE_ID \(id), which the catalog does not explain")
        }
        // The failed-enrollment entries carry their code's id (EnrollmentFailureMessageID),
        // checked against the table above rather than against call sites.
        let enrollment = Set(EnrollmentFailureMessageID.all)
        for id in headers where emitted[id] == nil && !enrollment.contains(id) {
            Issue.record("the catalog explains \(id), which no call site sends")
        }
        #expect(Set(DaemonMessageID.allCases.map(\.id)) == Set(emitted.keys), "every DaemonMessageID case is sent somewhere")
    }

    @Test("no call site sets MESSAGE_ID except through DaemonMessageID")
    func noLiteralMessageIDs() throws {
        let sources = repositoryRoot.appendingPathComponent("Sources")
        let literalID = try Regex(#""[0-9a-fA-F]{32}""#)
        let literalKey = try Regex(#""MESSAGE_ID"\s*:"#)
        for file in try Self.swiftFiles(under: sources) where file.lastPathComponent != "DaemonMessageID.swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains(literalID), "\(file.lastPathComponent) holds a literal 128-bit id")
            #expect(!text.contains(literalKey), "\(file.lastPathComponent) sets MESSAGE_ID by hand")
        }
    }
}
