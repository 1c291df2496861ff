import Foundation
import GRDB
import GRDBSQLite
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// Retry ids of deleted records are pruned by a sweep of the id table in key order
/// (``RetryIdSweep``), not batch by batch: a retry of a stored record stays a duplicate, a
/// retry of a deleted one is stored again, and the pages written follow the table's size,
/// not the number of ids deleted.
@Suite struct RetryIdSweepTests {
    static let minute: Int64 = 60_000
    static let now: Int64 = 1_800_000_000_000

    /// A record of `kind` with `eventId`; logs are the same JSON under the log kind.
    static func record(_ eventId: String, time: Int64) -> DecodedRecord {
        StoreFixture.event(time: time, eventId: eventId)
    }

    /// The retry ids left in the prod database.
    static func idCount(_ f: StoreFixture) async throws -> Int {
        try await f.store.databases[.prod].pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM event_id") ?? 0 }
    }

    /// Generated stores against an oracle. Each seed writes batches of random kind and size a
    /// minute apart, compacts them into segments, and ages each kind out at its own random
    /// minute; after the pass, a retry of every record written is sent again: it must be a
    /// duplicate exactly when its record is still stored, and the table must hold one id per
    /// stored record, none of a deleted one.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func retriesAnswerAsTheirRecordsStand(seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let f = try StoreFixture(configuration: StoreConfiguration(compaction: CompactionPolicy(minimumAgeSeconds: 0)))
        let batches = 30 + random.below(30)
        var written: [(kind: RecordKind, ids: [String], receivedAt: Int64)] = []
        for n in 0..<batches {
            let kind: RecordKind = random.below(3) == 0 ? .log : .event
            let receivedAt = Self.now - Int64(batches - n) * Self.minute
            let ids = (0..<(1 + random.below(40))).map { "s\(seed)-b\(n)-\($0)" }
            _ = try await f.store.append(
                ids.map { Self.record($0, time: receivedAt) }, kind: kind, env: .prod, receivedAt: receivedAt, incident: nil)
            written.append((kind, ids, receivedAt))
            if random.below(8) == 0 { _ = try await f.store.compactor.compactOnce() }
        }
        _ = try await f.store.compactor.compactOnce()
        let eventsAge = Int64(1 + random.below(batches)) * 60
        let logsAge = Int64(1 + random.below(batches)) * 60
        let limits = RetentionPolicy.Limits(eventsMaxAge: eventsAge, logsMaxAge: logsAge, verboseLogsMaxAge: nil, maxBytes: nil)
        let result = try await f.store.databases[.prod].retention.apply(limits, nowMs: Self.now)

        var stored: [RecordKind: Set<String>] = [:]
        for kind in [RecordKind.event, .log] {
            let page = try await f.store.query(RecordQuery(kind: kind, limit: 10_000, order: .asc))
            stored[kind] = Set(
                page.records.map { record in
                    let text = String(decoding: record.json, as: UTF8.self)
                    return String(text.split(separator: "\"eventId\":\"")[1].prefix { $0 != "\"" })
                })
        }
        let storedCount = stored.values.reduce(0) { $0 + $1.count }
        #expect(result.records == written.reduce(0) { $0 + $1.ids.count } - storedCount, "seed \(seed)")
        #expect(result.retryIDs == result.records, "seed \(seed): every deleted record's id swept")
        #expect(try await Self.idCount(f) == storedCount, "seed \(seed)")
        for kind in [RecordKind.event, .log] {
            let all = written.filter { $0.kind == kind }.flatMap(\.ids)
            guard !all.isEmpty else { continue }
            let again = try await f.store.append(
                all.map { Self.record($0, time: Self.now) }, kind: kind, env: .prod, receivedAt: Self.now, incident: nil)
            #expect(again.duplicates == stored[kind]!.count, "seed \(seed), \(kind)")
            #expect(again.stored == all.count - stored[kind]!.count, "seed \(seed), \(kind)")
        }
        await f.close()
    }

    /// A pass that does not tidy (a growth pass) leaves a few stale ids for later; the next
    /// tidy pass takes them.
    @Test func aGrowthPassLeavesFewStaleIdsForTheNextTidyPass() async throws {
        let f = try StoreFixture()
        for n in 0..<10 {
            let at = Self.now - Int64(20 - n) * Self.minute
            _ = try await f.store.append(
                (0..<20).map { Self.record("g\(n)-\($0)", time: at) }, kind: .event, env: .prod, receivedAt: at, incident: nil)
        }
        let retention = f.store.databases[.prod].retention
        let limits = RetentionPolicy.Limits(eventsMaxAge: 15 * 60, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: nil)
        let growth = try await retention.apply(limits, nowMs: Self.now, returnFreeSpace: false)
        #expect(growth.records == 100 && growth.retryIDs == 0)
        #expect(try await Self.idCount(f) == 200)
        let tidy = try await retention.apply(limits, nowMs: Self.now, returnFreeSpace: true)
        #expect(tidy.records == 0 && tidy.retryIDs == 100)
        #expect(try await Self.idCount(f) == 100)
        // Nothing went stale since: the next tidy pass does not walk the table.
        #expect(try await retention.apply(limits, nowMs: Self.now, returnFreeSpace: true).retryIDs == 0)
        await f.close()
    }

    /// Pages written to the WAL by deleting half of the records and then sweeping their ids:
    /// at most each page of the id table once, and each page of its seq index once per step,
    /// plus a few pages per deleted batch. Deleting each batch's ids with it wrote a page of
    /// the table per id (the keys are hashes: a batch's ids are on as many pages as it has).
    /// Counted (SQLite's cache writes on the one writer connection), not timed.
    @Test func theSweepWritesEachPageOfTheIdTableOnce() async throws {
        let f = try StoreFixture()
        let batches = 100
        for n in 0..<batches {
            let at = Self.now - Int64(2 * batches - n) * Self.minute
            _ = try await f.store.append(
                (0..<50).map { Self.record("p\(n)-\($0)", time: at) }, kind: .event, env: .prod, receivedAt: at, incident: nil)
        }
        let pool = f.store.databases[.prod].pool
        let (tablePages, indexPages) = try await pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM dbstat WHERE name = 'event_id'") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM dbstat WHERE name = 'event_key_seq'") ?? 0
            )
        }
        func pagesWritten() async throws -> Int {
            try await pool.writeWithoutTransaction { db in
                var current: Int32 = 0
                var highest: Int32 = 0
                sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highest, 0)
                return Int(current)
            }
        }
        let before = try await pagesWritten()
        let retention = EnvironmentRetention(pool: pool, space: f.store.databases[.prod].space, recordsPerStep: 50)
        let limits = RetentionPolicy.Limits(
            eventsMaxAge: (Int64(batches) + Int64(batches / 2)) * 60, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: nil)
        let deleted = try await retention.apply(limits, nowMs: Self.now, returnFreeSpace: false)
        let swept = try await RetryIdSweep.runIfDue(pool, tidy: true)
        let written = try await pagesWritten() - before
        #expect(deleted.batches == batches / 2 && swept == batches / 2 * 50)
        let bound = tablePages + RetryIdSweep.steps * indexPages + 8 * deleted.batches
        #expect(
            written <= bound,
            "\(written) pages written for \(swept) ids; the id table has \(tablePages) pages, its seq index \(indexPages)")
        await f.close()
    }

    /// The sweep's statement walks a range of the primary key, not the seq index.
    @Test func theSweepWalksThePrimaryKey() async throws {
        let f = try StoreFixture()
        let plan = try await f.store.databases[.prod].pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + RetryIdSweep.deleteStaleIds, arguments: [Data([0]), Data([16]), 1, 1])
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("PRIMARY KEY") }, "\(plan)")
        #expect(!plan.contains { $0.contains("event_key_seq") }, "\(plan)")
        await f.close()
    }

    /// The steps' key ranges cover every key once.
    @Test func theStepsCoverTheKeySpace() {
        var random = SeededRandom(seed: 7)
        for _ in 0..<2_000 {
            let key = Data((0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            let holding = (0..<RetryIdSweep.steps).filter { step in
                let range = RetryIdSweep.keyRange(step: step)
                return key.lexicographicallyPrecedes(range.upper) && !key.lexicographicallyPrecedes(range.lower)
            }
            #expect(holding.count == 1, "\(key as NSData) in steps \(holding)")
        }
    }
}
