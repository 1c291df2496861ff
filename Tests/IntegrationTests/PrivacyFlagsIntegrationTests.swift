import Compression
import Foundation
import GRDB
import TestSupport
import Testing

/// MAMTelemetryDisabled never reaches disk; PPE only under env=ppe (issue 2, SPEC §2.3).
@Suite(.serialized) struct PrivacyFlagsIntegrationTests {
    @Test func disabledTelemetryNeverTouchesDiskAndPPEStaysApart() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let marker = "OPTED-OUT-\(UUID().uuidString)"
        let ppeMarker = "PPE-ONLY-\(UUID().uuidString)"
        // The registry marks one app opted out; another app opts out in its own settings.
        let (regStatus, _, _) = try await d.post("/v1/apps/com.registry.optout", body: [])
        #expect(regStatus == 405 || regStatus == 404 || regStatus == 400)  // PUT is the verb
        #expect(try await d.post("/v1/apps/com.registry.optout", body: Array(#"{"telemetryDisabled":true}"#.utf8), method: .PUT).0 == 200)
        #expect(try await d.post("/v1/apps/com.registry.ppe", body: Array(#"{"usePPE":true}"#.utf8), method: .PUT).0 == 200)

        let lines = [
            #"{"name":"AppLaunch","appId":"com.self.optout","deviceId":"\#(marker)","settings":{"MAMTelemetryDisabled":"YES"}}"#,
            #"{"name":"AppLaunch","appId":"com.registry.optout","deviceId":"\#(marker)"}"#,
            #"{"name":"AppLaunch","appId":"com.registry.optout","deviceId":"\#(marker)","settings":{"MAMTelemetryDisabled":false}}"#,
            #"{"name":"AppLaunch","appId":"com.test","deviceId":"\#(ppeMarker)","settings":{"MAMTelemetryUsePPE":true}}"#,
            #"{"name":"AppLaunch","appId":"com.old.sdk","deviceId":"\#(ppeMarker)","settings":{"com.microsoft.intune.mam.useppe":"1"}}"#,
            #"{"name":"AppLaunch","appId":"com.registry.ppe","deviceId":"\#(ppeMarker)"}"#,
            #"{"name":"AppLaunch","appId":"com.prod","deviceId":"prod-device"}"#,
        ]
        let (status, body, headers) = try await d.post("/v1/telemetry", body: Array(lines.joined(separator: "\n").utf8))
        #expect(status == 200)
        let answer = parseJSON(body)
        #expect(answer["accepted"] as? Int == 4)
        #expect((answer["dropped"] as? [String: Int])?["telemetryDisabled"] == 3)
        #expect((answer["env"] as? [String: Int]) == ["prod": 1, "ppe": 3])
        #expect(headers.first(name: "Kill-Tokens") == "com.registry.optout")
        #expect(headers.first(name: "Kill-Duration") == "86400")

        #expect(try await d.allEvents().map { $0["deviceId"] as? String } == ["prod-device"])
        #expect(try await d.allEvents(env: "ppe").count == 3)

        if case .clickhouse(let url) = d.backend {
            // On ClickHouse the records leave the collector: nothing opted out may arrive there
            // either, and PPE only in the PPE database (the prod record is the positive control).
            let inspector = ClickHouseInspector(url: url)
            let databases = [d.clickHouseDatabase, d.clickHouseDatabase + "_ppe"]
            _ = try await inspector.eventually(
                "SELECT count() FROM \(d.clickHouseDatabase).records FINAL WHERE device = 'prod-device' FORMAT TSV", "1\n")
            #expect(try await inspector.tablesContaining("prod-device", databases: databases).found == ["\(d.clickHouseDatabase).records"])
            #expect(try await inspector.tablesContaining(marker, databases: databases).found == [])
            _ = try await inspector.eventually("SELECT count() FROM \(databases[1]).records FINAL FORMAT TSV", "3\n")
            #expect(try await inspector.tablesContaining(ppeMarker, databases: databases).found == ["\(databases[1]).records"])
        }
        d.stop()
        // Read every file the daemon wrote, raw and through SQLite with every blob inflated.
        let files = FileManager.default.enumerator(at: d.dataDirectory, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
        var inflatedBlobs = 0
        for file in files where !file.hasDirectoryPath {
            let raw = try Data(contentsOf: file)
            #expect(raw.range(of: Data(marker.utf8)) == nil, "\(file.lastPathComponent) holds opted-out data")
            if file.pathExtension == "sqlite" {
                inflatedBlobs += try Self.inflateEveryBlob(in: file, marker: marker, ppeMarker: ppeMarker)
            }
        }
        // keys + payload of at least one batch per env. Not on ClickHouse: there the files are
        // the spool, which deletes each batch once ClickHouse holds it.
        if !d.backend.isClickHouse { #expect(inflatedBlobs >= 4) }
    }

    /// Opens a store file with SQLite, reads every column of every row, and inflates every
    /// blob that is a zlib stream; checks the opted-out marker appears in none of it and the
    /// PPE marker in nothing of the prod store. Returns how many blobs were inflated.
    static func inflateEveryBlob(in file: URL, marker: String, ppeMarker: String) throws -> Int {
        let db = try DatabaseQueue(path: file.path)
        return try db.read { db -> Int in
            var inflated = 0
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                    for (_, value) in row {
                        guard case .blob(let data) = value.storage else {
                            if case .string(let s) = value.storage { #expect(!s.contains(marker)) }
                            continue
                        }
                        let bytes = [UInt8](data)
                        #expect(!String(decoding: bytes, as: UTF8.self).contains(marker))
                        if let plain = try? Inflate.decompress(bytes, format: .zlib) {
                            inflated += 1
                            let text = String(decoding: plain, as: UTF8.self)
                            #expect(!text.contains(marker), "an inflated block in \(file.lastPathComponent) holds opted-out data")
                            if file.path.contains("/prod/") { #expect(!text.contains(ppeMarker), "PPE data in the prod store") }
                        }
                    }
                }
            }
            return inflated
        }
    }
}
