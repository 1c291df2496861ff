import Foundation
import HTTPTypes
import TestSupport
import Testing

@testable import TelemetryServer

/// MAMTelemetryDisabled never reaches disk; PPE only under env=ppe (issue 2, SPEC §2.3): the
/// daemon's router and services in process, then every file they wrote read once they stopped.
@Suite struct PrivacyFlagsIntegrationTests {
    @Test func disabledTelemetryNeverTouchesDiskAndPPEStaysApart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("privacy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let marker = "OPTED-OUT-\(UUID().uuidString)"
        let ppeMarker = "PPE-ONLY-\(UUID().uuidString)"
        let backend = TestBackend.current
        try await IngestHarness.run(directory: directory) { h in
            // The registry marks one app opted out; another app opts out in its own settings.
            let wrongVerb = try await h.post("/v1/apps/com.registry.optout", "").status.code
            #expect(wrongVerb == 405 || wrongVerb == 404 || wrongVerb == 400)  // PUT is the verb
            for (app, flags) in [("com.registry.optout", #"{"telemetryDisabled":true}"#), ("com.registry.ppe", #"{"usePPE":true}"#)] {
                let registered = try await h.post("/v1/apps/\(app)", flags, method: .put)
                #expect(registered.status == .ok, "\(registered.body)")
            }

            let lines = [
                #"{"name":"AppLaunch","appId":"com.self.optout","deviceId":"\#(marker)","settings":{"MAMTelemetryDisabled":"YES"}}"#,
                #"{"name":"AppLaunch","appId":"com.registry.optout","deviceId":"\#(marker)"}"#,
                #"{"name":"AppLaunch","appId":"com.registry.optout","deviceId":"\#(marker)","settings":{"MAMTelemetryDisabled":false}}"#,
                #"{"name":"AppLaunch","appId":"com.test","deviceId":"\#(ppeMarker)","settings":{"MAMTelemetryUsePPE":true}}"#,
                #"{"name":"AppLaunch","appId":"com.old.sdk","deviceId":"\#(ppeMarker)","settings":{"com.microsoft.intune.mam.useppe":"1"}}"#,
                #"{"name":"AppLaunch","appId":"com.registry.ppe","deviceId":"\#(ppeMarker)"}"#,
                #"{"name":"AppLaunch","appId":"com.prod","deviceId":"prod-device"}"#,
            ]
            let answer = try await h.post("/v1/telemetry", lines.joined(separator: "\n"))
            #expect(answer.status == .ok)
            #expect(answer.accepted == 4)
            #expect((answer.json["dropped"] as? [String: Int])?["telemetryDisabled"] == 3)
            #expect((answer.json["env"] as? [String: Int]) == ["prod": 1, "ppe": 3])
            #expect(answer.headers[HTTPField.Name("Kill-Tokens")!] == "com.registry.optout")
            #expect(answer.headers[HTTPField.Name("Kill-Duration")!] == "86400")

            #expect(try await h.records("events").map { $0["deviceId"] as? String } == ["prod-device"])
            #expect(try await h.records("events", env: "ppe").count == 3)

            if case .clickhouse(let url) = backend {
                // On ClickHouse the records leave the collector: nothing opted out may arrive there
                // either, and PPE only in the PPE database (the prod record is the positive control).
                let database = h.components.configuration.clickhouse.database
                let inspector = ClickHouseInspector(url: url)
                let databases = [database, database + "_ppe"]
                _ = try await inspector.eventually(
                    "SELECT count() FROM \(database).records FINAL WHERE device = 'prod-device' FORMAT TSV", "1\n")
                #expect(try await inspector.tablesContaining("prod-device", databases: databases).found == ["\(database).records"])
                #expect(try await inspector.tablesContaining(marker, databases: databases).found == [])
                _ = try await inspector.eventually("SELECT count() FROM \(databases[1]).records FINAL FORMAT TSV", "3\n")
                #expect(try await inspector.tablesContaining(ppeMarker, databases: databases).found == ["\(databases[1]).records"])
            }
        }
        // The run is over (services stopped, files closed): read every file it wrote, raw and
        // through SQLite with every blob inflated.
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
        for file in files where !file.hasDirectoryPath {
            let raw = try Data(contentsOf: file)
            #expect(raw.range(of: Data(marker.utf8)) == nil, "\(file.lastPathComponent) holds opted-out data")
        }
        // After the raw pass: opening a store with SQLite removes its -shm file.
        var inflatedBlobs = 0
        for file in files where file.pathExtension == "sqlite" {
            inflatedBlobs += try StoreFileScan.inflateEveryBlob(in: file, marker: marker, ppeMarker: ppeMarker)
        }
        // keys + payload of at least one batch per env. Not on ClickHouse: there the files are
        // the spool, which deletes each batch once ClickHouse holds it.
        if !backend.isClickHouse { #expect(inflatedBlobs >= 4) }
    }
}
