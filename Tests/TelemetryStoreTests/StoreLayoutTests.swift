import Foundation
import GRDB
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// `StoreLayout` says what the store holds: the records committed per environment and kind,
/// how many rows the compactor merged, and bytes that add up to what was stored.
@Suite struct StoreLayoutTests {
    @Test func theLayoutCountsWhatWasCommittedAndWhatTheCompactorMerged() async throws {
        let now: Int64 = 1_800_000_000_000
        let f = try CompactionTests.Fixture(now: now, maxRecords: 50)
        var random = SeededRandom(seed: 11)
        var events = 0
        var logs = 0
        var raw = 0
        for n in 0..<24 {
            let device = CompactionTests.guid(&random)
            let batch = (0..<(1 + Int(random.next() % 6))).map {
                StoreFixture.event(device: device, time: now - 80_000 + Int64(n * 10 + $0), eventId: "e\(n)-\($0)")
            }
            events += batch.count
            raw += batch.reduce(0) { $0 + $1.json.count + 1 }
            _ = try await f.store.append(batch, kind: .event, env: .prod, receivedAt: now - 60_000 + Int64(n), incident: nil)
            if n % 3 == 0 {
                logs += 1
                _ = try await f.store.append(
                    [CompactionTests.log(n, device: device, time: now - 80_000)], kind: .log, env: .prod,
                    receivedAt: now - 60_000 + Int64(n),
                    incident: nil)
            }
        }
        _ = try await f.store.append(
            [StoreFixture.event(time: now - 1000, eventId: "ppe")], kind: .event, env: .ppe, receivedAt: now - 50_000, incident: nil)

        let before = try StoreLayout.read(dataDirectory: f.directory)
        #expect(before.environments.map(\.environment) == [.prod, .ppe])
        let prod = try #require(before.environments.first)
        let prodEvents = try #require(prod.kinds.first { $0.kind == .event })
        let prodLogs = try #require(prod.kinds.first { $0.kind == .log })
        #expect(prodEvents.records == Int64(events) && prodEvents.rows == 24 && prodEvents.segments == 0)
        #expect(prodEvents.uncompacted == 24)
        #expect(prodLogs.records == Int64(logs) && prodLogs.rows == Int64(logs))
        #expect(prodEvents.storedBytes == prodEvents.keysBytes + prodEvents.payloadBytes)
        #expect(prodEvents.guidTableBytes == 0, "batches have no GUID table")
        #expect(abs(Int(prodEvents.rawBytes) - raw) <= 24, "raw bytes are the NDJSON received, newline or not")
        #expect(before.environments[1].kinds.first { $0.kind == .event }?.records == 1)
        #expect(prod.usedBytes == (prod.pages - prod.freePages) * prod.pageSize && prod.usedBytes > 0)
        #expect(prod.fileBytes >= prod.usedBytes)

        let pass = try await f.store.compactor.compactOnce()
        let after = try StoreLayout.read(dataDirectory: f.directory)
        let merged = try #require(after.environments.first?.kinds.first { $0.kind == .event })
        #expect(merged.records == Int64(events), "compaction moves records, it does not drop them")
        #expect(merged.segments > 1 && merged.uncompacted == 0)
        let everyRow = after.environments.flatMap(\.kinds).reduce(0) { $0 + $1.rows }
        #expect(everyRow == Int64(pass.segments), "every row of both environments is a segment the pass wrote")
        #expect(merged.storedBytes < prodEvents.storedBytes)
        // Each batch has its own device GUID, and every segment stores each of its GUIDs once.
        var readOnly = Configuration()
        readOnly.readonly = true
        let prodFile = f.directory.appendingPathComponent("prod").appendingPathComponent(EnvironmentDatabase.fileName)
        let keysBlobs = try await DatabaseQueue(path: prodFile.path, configuration: readOnly).read { db in
            try Data.fetchAll(db, sql: "SELECT keys FROM batch")
        }
        let guidTables = try keysBlobs.reduce(0) { $0 + (try StoreLayout.guidTableBytes(keysBlob: [UInt8]($1))) }
        #expect(merged.guidTableBytes > 0 && merged.guidTableBytes < merged.keysBytes)
        #expect(after.environments[0].kinds.reduce(0) { $0 + $1.guidTableBytes } == Int64(guidTables))
        #expect(guidTables >= 24 * 16, "the 24 devices' GUIDs are in some segment's table")

        // The JSON the daemon prints names every figure, the derived one included.
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(after)) as? [String: Any]
        let kind = ((json?["environments"] as? [[String: Any]])?.first?["kinds"] as? [[String: Any]])?.first
        #expect(kind?["uncompacted"] as? Int == 0 && kind?["kind"] as? String == "event")
        #expect(try JSONDecoder().decode(StoreLayout.self, from: JSONEncoder().encode(after)) == after)
        await f.close()
    }

    @Test func aDataDirectoryWithoutAStoreHasNoEnvironments() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("layout-\(UUID().uuidString)")
        #expect(try StoreLayout.read(dataDirectory: empty).environments.isEmpty)
    }
}
