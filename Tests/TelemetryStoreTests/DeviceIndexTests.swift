import Foundation
import GRDB
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// The device index behind forgiving lookups: kept from the commits that store the records,
/// equal to what the records give (the migration's rebuild is the reference), and answering
/// lookups as a brute-force search over the stored devices would. And the user's story
/// filter: the identity's records plus the identity-less records of its devices.
@Suite struct DeviceIndexTests {
    static func guid(_ random: inout SeededRandom) -> String {
        let hex = Array("0123456789abcdef")
        let text = String((0..<32).map { _ in hex[random.below(16)] })
        let id = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { r in String(Array(text)[r]) }.joined(separator: "-")
        return random.below(2) == 0 ? id.uppercased() : id
    }

    /// The index's rows once the buffered sightings are written (as a lookup writes them).
    static func indexRows(_ store: SQLiteRecordStore, _ env: TelemetryEnvironment) async throws -> [String] {
        try await store.databases[env].deviceIndex.buffer.flush(store.databases[env].pool)
        return try await store.databases[env].pool.read { db in
            try Row.fetchAll(db, sql: "SELECT device, app, deviceLower FROM device_index ORDER BY device, app").map {
                "\($0["device"] as String)|\($0["app"] as String)|\($0["deviceLower"] as String)"
            }
        }
    }

    @Test(arguments: 0..<3) func theIndexIsWhatTheRecordsGiveAndLookupsMatchABruteForceSearch(seed: UInt64) async throws {
        var random = SeededRandom(seed: 0xD1CE + seed)
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 16))
        let devices = (0..<40).map { _ in Self.guid(&random) } + ["ABC-1", "abc-2", "Abc-1", "dev-1", "DEV-1x"]
        let apps = ["com.a", "com.b", "com.c"]
        var stored: [String: Set<String>] = [:]
        for round in 0..<12 {
            let records = (0..<(1 + random.below(60))).map { i -> DecodedRecord in
                // Retries of stored records (same app and eventId, maybe another device) are dropped: not indexed.
                StoreFixture.event(
                    app: random.pick(apps), device: random.pick(devices), time: Int64(round * 100 + i), eventId: "e\(random.below(200))")
            }
            let outcome = try await f.store.append(
                records, kind: random.below(2) == 0 ? .event : .log, env: .prod, receivedAt: Int64(round), incident: nil)
            let dropped = Set(outcome.duplicateIndices)
            for (i, r) in records.enumerated() where !dropped.contains(i) { stored[r.keys.deviceId, default: []].insert(r.keys.appId) }
        }
        let incremental = try await Self.indexRows(f.store, .prod)
        try await f.store.databases[.prod].pool.write { db in try DeviceIndex.rebuild(db) }
        #expect(try await Self.indexRows(f.store, .prod) == incremental)
        #expect(Set(incremental.map { String($0.split(separator: "|")[0]) }) == Set(stored.keys))

        var queries = ["abc", "ABC-1", "abc-1", "dev-1", "zzz", "a", ""]
        for _ in 0..<200 {
            let device = random.pick(Array(stored.keys))
            var text = String(device.prefix(1 + random.below(device.count)))
            if random.below(2) == 0 { text = text.lowercased() }
            if random.below(4) == 0 { text += "q" }
            queries.append(text)
        }
        for text in queries {
            let found = try await f.store.findDevices(DeviceLookup(text: text, env: .prod, limit: 5))
            let lower = text.lowercased()
            let expectedMatches = stored.keys.filter {
                lower.count >= DeviceLookupResult.minimumPrefix ? $0.lowercased().hasPrefix(lower) : $0.lowercased() == lower
            }.sorted { ($0.lowercased(), $0) < ($1.lowercased(), $1) }
            #expect(found.exact?.deviceId == (stored[text] != nil ? text : nil), "\(text)")
            #expect(found.matches.map(\.deviceId) == Array(expectedMatches.prefix(6)), "\(text)")
            for m in found.matches { #expect(Set(m.apps) == stored[m.deviceId], "\(m)") }
            if found.exact == nil && expectedMatches.isEmpty {
                #expect(!found.near.isEmpty && found.near.count <= 5, "\(text)")
                // The best suggestion shares the longest prefix any stored id shares.
                func shared(_ id: String) -> Int { zip(lower, id.lowercased()).prefix { $0 == $1 }.count }
                let best = stored.keys.map(shared).max() ?? 0
                #expect(found.near.first.map { shared($0.deviceId) } == best, "\(text): \(found.near.map(\.deviceId))")
            } else {
                #expect(found.near.isEmpty)
            }
        }
        let onlyB = try await f.store.findDevices(DeviceLookup(text: "abc", env: .prod, app: "com.b", limit: 5))
        #expect(onlyB.matches.allSatisfy { $0.apps == ["com.b"] })
        await f.close()
    }

    @Test func retentionForgetsDevicesWithoutRecords() async throws {
        let f = try StoreFixture()
        let hour: Int64 = 3_600_000
        _ = try await f.store.append(
            [StoreFixture.event(device: "old-device", time: 0)], kind: .event, env: .prod, receivedAt: 0, incident: nil)
        _ = try await f.store.append(
            [StoreFixture.event(device: "new-device", time: 0)], kind: .log, env: .prod, receivedAt: 100 * hour, incident: nil)
        let limits = RetentionPolicy.Limits(eventsMaxAge: 50 * 3600, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: nil)
        _ = try await f.store.applyRetention(limits, env: .prod, nowMs: 100 * hour, returnFreeSpace: true)
        let rows = try await Self.indexRows(f.store, .prod)
        #expect(rows == ["new-device|com.app|new-device"])
        await f.close()
    }

    @Test func aUsersStoryHoldsItsRecordsAndTheAnonymousRecordsOfItsDevices() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 5))
        let mine = [
            StoreFixture.event(device: "phone", identity: "Jane@Contoso.com", time: 1_000),
            StoreFixture.event(device: "phone", time: 1_001),  // the device's, no identity: hers
            StoreFixture.event(device: "phone", identity: "bob@contoso.com", time: 1_002),  // another user on it
            StoreFixture.event(device: "tablet", identity: "jane@contoso.com", time: 5_000),
            StoreFixture.event(device: "tablet", time: 5_001),
            StoreFixture.event(device: "other", time: 1_003),
            StoreFixture.event(device: "laptop", identity: "jane@contoso.com", time: 90_000),  // outside the window
            StoreFixture.event(device: "laptop", time: 1_004),
        ]
        _ = try await f.store.append(mine, kind: .event, env: .prod, receivedAt: 1, incident: nil)
        let used = try await f.store.devices(usedBy: "JANE@contoso.com", env: .prod, apps: nil, since: 0, until: 10_000, limit: 10)
        #expect(Set(used) == ["phone", "tablet"])
        var q = RecordQuery(kind: .event, identity: "jane@contoso.com", since: 0, until: 10_000, limit: 100, order: .asc)
        q.identityDevices = Set(used)
        #expect(try await f.store.query(q).records.map(\.keys.time) == [1_000, 1_001, 5_000, 5_001])
        q.identityDevices = nil
        #expect(try await f.store.query(q).records.map(\.keys.time) == [1_000, 5_000])
        await f.close()
    }

    /// A store from before v10 keeps its device index through the move to one tree: the same
    /// rows, found by exact, case-insensitive and prefix lookups, and upserted in place by
    /// the next commit; the second index is gone, so a new device costs one tree's write.
    @Test func theTwoTreeIndexMovesIntoOneWithEveryRow() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("device-index-v10-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: dir.appendingPathComponent("records.sqlite").path)
        try StoreSchema.migrator.migrate(pool, upTo: "v9-retry-id-keys")
        let old = [
            ("ABC-Phone", "com.a", 10, 20), ("abc-phone", "com.a", 11, 21), ("ABC-Phone", "com.b", 12, 22), ("tablet", "com.a", 1, 2),
        ]
        try await pool.write { db in
            for (device, app, first, last) in old {
                try db.execute(
                    sql: "INSERT INTO device_index(device, app, deviceLower, firstSeen, lastSeen) VALUES (?, ?, ?, ?, ?)",
                    arguments: [device, app, device.lowercased(), first, last])
            }
        }
        try StoreSchema.migrator.migrate(pool)
        let (rows, indexes) = try await pool.read { db in
            (
                try Row.fetchAll(db, sql: "SELECT device, app, firstSeen, lastSeen FROM device_index ORDER BY device, app").map {
                    "\($0["device"] as String)|\($0["app"] as String)|\($0["firstSeen"] as Int64)|\($0["lastSeen"] as Int64)"
                },
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'device_index'")
            )
        }
        #expect(rows == ["ABC-Phone|com.a|10|20", "ABC-Phone|com.b|12|22", "abc-phone|com.a|11|21", "tablet|com.a|1|2"])
        #expect(indexes.allSatisfy { $0.hasPrefix("sqlite_autoindex") }, "a second index is left: \(indexes)")
        let found = try await pool.read { db in try DeviceIndex.find(DeviceLookup(text: "ABC-Phone", limit: 5), db: db) }
        #expect(found.exact?.deviceId == "ABC-Phone")
        #expect(found.exact?.apps == ["com.a", "com.b"])
        #expect(Set(found.matches.map(\.deviceId)) == ["ABC-Phone", "abc-phone"])
        // A later sighting of a known pair updates its row instead of adding one.
        var sightings = DeviceSightings()
        sightings.add(.init(app: "com.a", device: "ABC-Phone"), receivedAt: 99)
        try await pool.write { [sightings] db in try sightings.apply(db) }
        let updated = try await pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT lastSeen FROM device_index WHERE device = 'ABC-Phone' AND app = 'com.a'")
        }
        #expect(updated == [99])
        try pool.close()
    }
}
