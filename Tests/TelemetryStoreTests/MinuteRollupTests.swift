import Foundation
import GRDB
import Metrics
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// The minute rollups: complete from their horizon on (commits, the upgrade's backfill, a
/// rebuild), never written before it, and moved on by retention and the spool.
@Suite struct MinuteRollupTests {
    static let base = RollupTests.base
    static let minute = EventRollupScope.minuteMs
    static let hour = EventRollupScope.hourMs

    /// Per-minute digests of `name` over `since...until` from minute rollups and from records.
    static func perMinute(_ store: SQLiteRecordStore, name: String, since: Int64, until: Int64) async throws -> (
        rollups: RollupTests.Digest, records: RollupTests.Digest, rollupRows: Int
    ) {
        let viaRollups = try await RollupTests.digest(
            store, EventStatsScan(env: .prod, name: name, since: since, until: until, app: nil, rollupGrain: .minute, bucketMs: minute),
            width: minute)
        let viaRecords = try await RollupTests.digest(
            store, EventStatsScan(env: .prod, name: name, since: since, until: until, app: nil, rollupGrain: nil, bucketMs: minute),
            width: minute)
        return (viaRollups.digest, viaRecords.digest, viaRollups.rollupRows)
    }

    static func horizon(_ store: SQLiteRecordStore) async throws -> Int64 {
        try await store.databases[.prod].pool.read { try MinuteRollupHorizon.read($0) }
    }

    static func minuteRows(_ store: SQLiteRecordStore, before: Int64 = .max) async throws -> Int {
        try await store.databases[.prod].pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM event_minute_rollup WHERE minute < ?", arguments: [before]) ?? 0
        }
    }

    @Test func aNewStoreRollsUpEveryMinuteAtCommit() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 61))
        #expect(try await Self.horizon(f.store) == .min, "an empty store's minutes are all complete")
        var random = SeededRandom(seed: 3)
        _ = try await f.store.append(
            RollupTests.seed(1200, prefix: "n", random: &random), kind: .event, env: .prod, receivedAt: Self.base, incident: nil)
        for name in RollupTests.names {
            let r = try await Self.perMinute(f.store, name: name, since: Self.base + 12_345, until: Self.base + 30 * Self.hour - 7)
            #expect(r.rollups == r.records, "\(name)")
            #expect(r.rollupRows > 100, "\(name): answered from minute rows")
        }
        await f.close()
    }

    /// Retention moves the horizon to two days before now and deletes the rows before it; a
    /// late event for a minute before it is stored but not rolled up by minute, and windows
    /// there are answered from the records.
    @Test func retentionMovesTheKeptMinutesAndLateEventsBeforeThemStayInRecords() async throws {
        let f = try StoreFixture()
        var random = SeededRandom(seed: 4)
        _ = try await f.store.append(
            RollupTests.seed(600, prefix: "h", random: &random), kind: .event, env: .prod, receivedAt: Self.base, incident: nil)
        let now = Self.base + 60 * Self.hour + 17_000
        let limits = RetentionPolicy.Limits(eventsMaxAge: nil, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: nil)
        let pass = try await f.store.retention[.prod].apply(limits, nowMs: now)
        let horizon = EventRollupScope.minute(of: now - EventRollupScope.minutesKeptMs)
        #expect(try await Self.horizon(f.store) == horizon)
        #expect(pass.rollupRows > 0 && pass.records == 0)
        #expect(try await Self.minuteRows(f.store, before: horizon) == 0)
        #expect(try await Self.minuteRows(f.store) > 0, "the minutes after the horizon stay")
        // A late call for a minute before the horizon, and one after it.
        let late = [
            RollupTests.event(
                EventName.enrollmentCall, app: "com.a", detail: "enroll", time: horizon - 3 * Self.minute + 5, eventId: "late-1",
                statusCode: 100, durationMs: 12),
            RollupTests.event(
                EventName.enrollmentCall, app: "com.a", detail: "enroll", time: horizon + 5, eventId: "late-2", statusCode: 100,
                durationMs: 12),
        ]
        _ = try await f.store.append(late, kind: .event, env: .prod, receivedAt: now, incident: nil)
        #expect(try await Self.minuteRows(f.store, before: horizon) == 0, "no minute row before the horizon")
        let r = try await Self.perMinute(f.store, name: EventName.enrollmentCall, since: Self.base, until: now)
        #expect(r.rollups == r.records)
        #expect(r.records.counts.values.reduce(0, +) > 2)
        // A second pass earlier than the first never moves the horizon back.
        _ = try await f.store.retention[.prod].apply(limits, nowMs: now - Self.hour)
        #expect(try await Self.horizon(f.store) == horizon)
        await f.close()
    }

    /// A store written before minute rollups existed gets them computed from the records of
    /// the two days before the newest event it received; older minutes are answered as before.
    @Test func theUpgradeBackfillsTheLastTwoDaysOfMinutes() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 83))
        var random = SeededRandom(seed: 5)
        _ = try await f.store.append(
            RollupTests.seed(800, prefix: "u", random: &random), kind: .event, env: .prod, receivedAt: Self.base, incident: nil)
        let newest = Self.base + 62 * Self.hour
        let recent = (0..<40).map { i in
            RollupTests.event(
                EventName.appLaunch, app: "com.b", detail: "MDM", time: newest - Int64(i) * 97_000, eventId: "recent-\(i)")
        }
        _ = try await f.store.append(recent, kind: .event, env: .prod, receivedAt: newest, incident: nil)
        let window = (since: Self.base - 5, until: newest + 1)
        var before: [String: RollupTests.Digest] = [:]
        for name in RollupTests.names {
            before[name] = try await Self.perMinute(f.store, name: name, since: window.since, until: window.until).records
        }
        try await f.store.databases[.prod].pool.write { db in
            try db.execute(sql: "DROP TABLE event_minute_rollup; DROP TABLE event_minute_latency_rollup")
            try db.execute(sql: "DELETE FROM meta WHERE key = ?", arguments: [MinuteRollupHorizon.key])
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v8-minute-rollups'")
        }
        await f.store.committer.close()
        let reopened = try SQLiteRecordStore(directory: f.directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let horizon = EventRollupScope.minute(of: newest - EventRollupScope.minutesKeptMs)
        #expect(try await Self.horizon(reopened) == horizon)
        #expect(try await Self.minuteRows(reopened, before: horizon) == 0)
        var usedRows = 0
        for name in RollupTests.names {
            let r = try await Self.perMinute(reopened, name: name, since: window.since, until: window.until)
            #expect(r.rollups == r.records && r.records == before[name], "\(name)")
            usedRows += r.rollupRows
        }
        #expect(usedRows > 100, "the kept minutes were backfilled")
        // A rebuild gives the same minute rows.
        let counted = try await Self.minuteRows(reopened)
        let rebuilt = try await reopened.rebuildRollups(env: .prod)
        #expect(rebuilt.minuteCountRows == counted)
        try? FileManager.default.removeItem(at: f.directory)
    }
}
