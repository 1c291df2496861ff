import Foundation
import Journal
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
        #expect(listed.count == DaemonMessageID.allCases.count)
        for id in DaemonMessageID.allCases {
            let subject = try #require(listed[id.id], "no catalog entry for \(id)")
            #expect(subject.hasPrefix("mamtelemetryd: "), "\(id): Defined-By must be mamtelemetryd")
        }

        let dump = try runProcess(
            "/usr/bin/journalctl", ["--root=\(root.path)", "--dump-catalog"] + DaemonMessageID.allCases.map(\.id))
        #expect(dump.status == 0)
        let entries = dump.standardOutput.components(separatedBy: "\n-- ").count
        #expect(entries == DaemonMessageID.allCases.count)
        #expect(dump.standardOutput.components(separatedBy: "Support: ").count - 1 == DaemonMessageID.allCases.count)
    }

    @Test("the catalog names no id the daemon does not send")
    func noStrayIDs() throws {
        let text = try String(contentsOf: Self.catalog, encoding: .utf8)
        let headers = text.split(separator: "\n").filter { $0.hasPrefix("-- ") }.map { String($0.dropFirst(3)) }
        #expect(Set(headers) == Set(DaemonMessageID.allCases.map(\.id)))
        #expect(headers.count == DaemonMessageID.allCases.count)
    }
}
