import Compression
import Foundation
import GRDB
import Metrics
import StoreCore
import TelemetryModel
import Testing

@testable import TelemetryStore

/// A store written before dedupe was per kind opens, keeps its records queryable and its
/// retries recognised, and from then on lets an event and a log record share an eventId
/// (issue 11 item 5: the migration keeps existing data working).
@Suite struct DedupeMigrationTests {
    /// Writes a version-1 prod database by hand: one event (seq 1), one log record (seq 2)
    /// and a dedupe row whose batch retention already deleted (seq 3).
    static func writeVersion1Store(at directory: URL) throws {
        let dir = directory.appendingPathComponent("prod")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: dir.appendingPathComponent("records.sqlite").path)
        try StoreSchema.migrator.migrate(pool, upTo: "v1")
        try pool.write { db in
            for (seq, kind, json, keys) in [
                (
                    Int64(1), 0, #"{"name":"AppLaunch","appId":"com.legacy","eventId":"legacy-e"}"#,
                    RecordKeys(time: 10, appId: "com.legacy", name: "AppLaunch")
                ),
                (
                    Int64(2), 1, #"{"level":"info","message":"legacy log","appId":"com.legacy","eventId":"legacy-l"}"#,
                    RecordKeys(time: 20, appId: "com.legacy", level: .info)
                ),
            ] {
                var bloom = BloomFilter(expected: 8)
                for term in BloomTerm.terms(of: keys) { bloom.insert(term) }
                let payload = try Deflate.compress(Array(json.utf8))
                let keysBlock = try Deflate.compress(KeysBlock.encode([keys]))
                try db.execute(
                    sql: """
                        INSERT INTO batch(kind, firstSeq, count, minTime, maxTime, receivedAt, rawBytes, storedBytes, levelMask, bloom, keys, payload)
                        VALUES (?, ?, 1, ?, ?, 0, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        kind, seq, keys.time, keys.time, json.utf8.count, payload.count + keysBlock.count,
                        keys.level.map { 1 << $0.rawValue } ?? 0, Data(bloom.bits), Data(keysBlock), Data(payload),
                    ])
            }
            try db.execute(
                sql:
                    "INSERT INTO event_id(appId, eventId, seq) VALUES ('com.legacy', 'legacy-e', 1), ('com.legacy', 'legacy-l', 2), ('com.legacy', 'orphan', 3)"
            )
            try db.execute(sql: "UPDATE meta SET value = 4 WHERE key = 'nextSeq'")
        }
    }

    static func record(_ kind: RecordKind, _ eventId: String) -> DecodedRecord {
        let json =
            kind == .event
            ? #"{"name":"AppLaunch","appId":"com.legacy","eventId":"\#(eventId)"}"#
            : #"{"level":"info","message":"new \#(eventId)","appId":"com.legacy","eventId":"\#(eventId)"}"#
        let keys =
            kind == .event
            ? RecordKeys(time: 30, appId: "com.legacy", name: "AppLaunch") : RecordKeys(time: 30, appId: "com.legacy", level: .info)
        return DecodedRecord(json: Array(json.utf8), keys: keys, flags: .unspecified, eventId: eventId)
    }

    @Test func aVersion1StoreOpensAndDedupesPerKind() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-v1-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writeVersion1Store(at: directory)

        let store = try SQLiteRecordStore(directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let committer = Task { try await store.committer.run() }
        defer { committer.cancel() }
        let applied = try await store.databases.prod.pool.read { try StoreSchema.migrator.appliedIdentifiers($0) }
        #expect(applied.contains("v2-dedupe-per-kind"))

        // Old records are still there.
        #expect(try await store.query(RecordQuery(kind: .event, limit: 10)).records.map(\.id) == [1])
        #expect(try await store.query(RecordQuery(kind: .log, limit: 10)).records.map(\.id) == [2])
        // Old retries are still recognised, each under its own kind (and the orphan as an event).
        for (kind, id) in [(RecordKind.event, "legacy-e"), (.log, "legacy-l"), (.event, "orphan")] {
            let again = try await store.append([Self.record(kind, id)], kind: kind, env: .prod, receivedAt: 1, incident: nil)
            #expect(again.duplicates == 1 && again.stored == 0, "\(kind) \(id)")
        }
        // The other kind with the same eventId is a different record now.
        let log = try await store.append([Self.record(.log, "legacy-e")], kind: .log, env: .prod, receivedAt: 1, incident: nil)
        #expect(log.stored == 1 && log.ids == [4])
        let event = try await store.append([Self.record(.event, "legacy-l")], kind: .event, env: .prod, receivedAt: 1, incident: nil)
        #expect(event.stored == 1 && event.ids == [5])

        // The text ids stay (LegacyRetryIds) until retention has deleted their records: the
        // old batches (received at 0) go, the orphan with them, and the table is dropped; a
        // retry of a record retention removed is stored again, as with keyed ids.
        let prod = store.databases.prod
        #expect(try await prod.pool.read { try LegacyRetryIds.exist($0) })
        let limits = RetentionPolicy.Limits(eventsMaxAge: 0, logsMaxAge: 0, verboseLogsMaxAge: nil, maxBytes: nil)
        let removed = try await prod.retention.apply(limits, nowMs: 1)
        #expect(removed.batches == 2)
        #expect(try await prod.pool.read { try LegacyRetryIds.exist($0) } == false)
        let again = try await store.append([Self.record(.event, "legacy-e")], kind: .event, env: .prod, receivedAt: 2, incident: nil)
        #expect(again.stored == 1)
        let still = try await store.append([Self.record(.log, "legacy-e")], kind: .log, env: .prod, receivedAt: 2, incident: nil)
        #expect(still.duplicates == 1, "the log stored after the upgrade is kept, with its key")
        await store.committer.close()
    }
}
