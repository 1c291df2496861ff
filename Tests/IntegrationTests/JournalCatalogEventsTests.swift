import Foundation
import TestSupport
import Testing

/// The storage and ingest-refusal events reach a real journal under the `MESSAGE_ID`s the
/// catalog explains, and `journalctl -x` shows that explanation next to them.
@Suite(.serialized, .enabled(if: JournaldHarness.isAvailable, "needs root, unshare and systemd-journald"))
struct JournalCatalogEventsTests {
    /// `DaemonMessageID.storageHighWater` / `.ingestRefused` (this target does not link
    /// `Systemd`; the ids are stable by contract).
    static let highWaterID = "5f615aebe5e24591a3ca4ede4cdc14b9"
    static let ingestRefusedID = "ae757b8f0c53474885405f3173698026"

    @Test func highWaterAndRefusalsAreLoggedOnceAndExplainedByTheCatalog() async throws {
        let harness = try JournaldHarness()
        defer { harness.remove() }
        // A high-water mark no disk meets: the daemon starts refusing ingest at once.
        // `/readyz` is 503 while the disk is past its mark.
        let (d, daemon) = try await harness.launchDaemon(
            ["--disk-min-free-bytes", "\(1 << 60)", "--disk-keep-free-bytes", "0"], readyPath: "/healthz")
        defer { try? FileManager.default.removeItem(at: d.dataDirectory) }
        defer { JournaldMirrorTests.stop(daemon, harness) }

        // A storm of refusals makes one journal line, not one per request.
        for _ in 0..<20 {
            #expect(try await d.post("/v1/telemetry", body: Array(#"{"name":"AppLaunch","appId":"com.x"}"#.utf8)).0 == 507)
        }
        let highWater = try await harness.waitForEntries(["MESSAGE_ID=\(Self.highWaterID)"])
        #expect(highWater.count == 1)
        #expect(highWater.first?["PRIORITY"] == "3")
        #expect(highWater.first?["MAM_DATADIR"] == d.dataDirectory.path)
        let refused = try await harness.waitForEntries(["MESSAGE_ID=\(Self.ingestRefusedID)"])
        try await Task.sleep(for: .milliseconds(500))
        #expect(try harness.entries(["MESSAGE_ID=\(Self.ingestRefusedID)"]).count == 1, "a refusal storm flooded the journal")
        #expect(refused.first?["MAM_REASON"] == "storage_full")
        #expect(refused.first?["MAM_STATUS"] == "507")

        let root = try JournaldMirrorTests.buildCatalogDatabase()
        defer { try? FileManager.default.removeItem(at: root) }
        let database = root.appendingPathComponent("var/lib/systemd/catalog/database")
        for id in [Self.highWaterID, Self.ingestRefusedID] {
            let explained = try JournaldMirrorTests.explain(harness, database: database, messageID: id)
            #expect(explained.status == 0, "\(explained.standardError)")
            let subject = try JournaldMirrorTests.catalogSubject(of: id)
            #expect(
                explained.standardOutput.contains(subject), "journalctl -x shows no explanation for \(id):\n\(explained.standardOutput)")
        }
        JournaldMirrorTests.terminateCommand(of: harness, daemon)
        #expect(JournaldMirrorTests.waitForExit(daemon, timeout: 15))
    }
}
