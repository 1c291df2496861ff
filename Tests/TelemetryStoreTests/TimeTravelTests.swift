import Foundation
import GRDB
import Logging
import Metrics
import StoreCore
import Synchronization
import TelemetryModel
import Testing

@testable import TelemetryStore

/// Forty days of a store's life on a simulated clock: every day brings events, info and
/// verbose logs, a diagnostic upload and PPE data; the compactor merges and retention sweeps
/// every six hours with the default policy (prod: verbose 3 d, logs 14 d, events 30 d; PPE
/// 2 / 7 / 7 d; hourly rollups kept 35 d here so their expiry falls inside the forty days).
/// After every sweep the whole store is compared with what the policy says must be there:
/// each age limit takes its data when it should, and nothing else disappears.
@Suite struct TimeTravelTests {
    /// Wall time the test moves; durations run on the real monotonic clock.
    final class SimulatedClock: WallClock {
        private let now: Mutex<Int64>
        init(_ start: Int64) { now = Mutex(start) }
        func nowMilliseconds() -> Int64 { now.withLock { $0 } }
        func monotonicNow() -> ContinuousClock.Instant { .now }
        func set(_ ms: Int64) { now.withLock { $0 = ms } }
    }

    static let hour: Int64 = 3_600_000
    static let day = 24 * hour
    /// Midnight UTC, 2027-01-15.
    static let day0: Int64 = 1_800_000_000_000 / day * day

    /// What was stored on one simulated day, at noon.
    struct Day {
        var receivedAt: Int64
        var events: [Int64] = []
        var eventIDs: [String] = []
        var infoLogs: [Int64] = []
        var verboseLogs: [Int64] = []
        var incidentID = ""
        var incidentLogs: [Int64] = []
        var ppeEvents: [Int64] = []
        var ppeVerbose: [Int64] = []
    }

    static let policy: RetentionPolicy = {
        var p = RetentionPolicy()
        p.prod.rollupsMaxAge = 35 * 86_400
        return p
    }()

    static func event(_ d: Int, _ i: Int, time: Int64) -> DecodedRecord {
        StoreFixture.event(name: "EnrollmentCall", time: time, eventId: "e\(d)-\(i)", statusCode: 100 + i)
    }

    static func store(day d: Int, at t: Int64, in store: SQLiteRecordStore) async throws -> Day {
        var day = Day(receivedAt: t)
        let events = (0..<3).map { Self.event(d, $0, time: t) }
        day.events = try await store.append(events, kind: .event, env: .prod, receivedAt: t, incident: nil).ids
        day.eventIDs = events.compactMap(\.eventId)
        day.infoLogs = try await store.append(
            [RetentionTests.log(.info, "info \(d)", time: t), RetentionTests.log(.warning, "warning \(d)", time: t)], kind: .log,
            env: .prod, receivedAt: t, incident: nil
        ).ids
        // A verbose-only batch, then a batch mixing levels (its verbose record is scrubbed in
        // place when the batch itself stays).
        var verbose = try await store.append(
            [RetentionTests.log(.verbose, "jane@contoso.com \(d)", identity: "jane@contoso.com", time: t)], kind: .log, env: .prod,
            receivedAt: t, incident: nil
        ).ids
        let mixed = try await store.append(
            [RetentionTests.log(.info, "mixed info \(d)", time: t), RetentionTests.log(.verbose, "mixed verbose \(d)", time: t)],
            kind: .log, env: .prod, receivedAt: t, incident: nil
        ).ids
        day.infoLogs.append(mixed[0])
        verbose.append(mixed[1])
        day.verboseLogs = verbose
        day.incidentID = "MAM-\(1000 + d)-TEST"
        var uploaded = RetentionTests.log(.error, "upload \(d)", time: t)
        uploaded.keys.incident = day.incidentID
        let incident = Incident(
            id: day.incidentID, guid: UUID().uuidString.lowercased(), env: .prod, appId: "com.app", deviceId: "dev", sessionId: nil,
            identity: nil, description: "day \(d)", createdAt: t, recordCount: 1, firstTime: t, lastTime: t)
        day.incidentLogs = try await store.append([uploaded], kind: .log, env: .prod, receivedAt: t, incident: incident).ids
        day.ppeEvents = try await store.append(
            [StoreFixture.event(time: t, eventId: "p\(d)")], kind: .event, env: .ppe, receivedAt: t, incident: nil
        ).ids
        day.ppeVerbose = try await store.append(
            [RetentionTests.log(.verbose, "ppe verbose \(d)", time: t)], kind: .log, env: .ppe, receivedAt: t, incident: nil
        ).ids
        return day
    }

    /// Every record of a kind and environment, by id.
    static func records(_ store: SQLiteRecordStore, _ kind: RecordKind, _ env: TelemetryEnvironment) async throws -> [Int64: String] {
        let page = try await store.query(RecordQuery(kind: kind, env: env, limit: 100_000, order: .asc))
        #expect(page.nextAfter == nil)
        return Dictionary(uniqueKeysWithValues: page.records.map { ($0.id, String(decoding: $0.json, as: UTF8.self)) })
    }

    /// Compares the store with the policy at `now`.
    static func check(_ store: SQLiteRecordStore, _ days: [Day], now: Int64, directory: URL) async throws {
        func kept(_ d: Day, days limit: Int64) -> Bool { d.receivedAt >= now - limit * day }
        let events = try await records(store, .event, .prod)
        let logs = try await records(store, .log, .prod)
        let ppeEvents = try await records(store, .event, .ppe)
        let ppeLogs = try await records(store, .log, .ppe)
        var expectedEvents = Set<Int64>()
        var expectedLogs = Set<Int64>()
        var expectedPPE = (events: Set<Int64>(), logs: Set<Int64>())
        for (n, d) in days.enumerated() {
            let at = "day \(n) at \(Timestamp.format(milliseconds: now))"
            if kept(d, days: 30) { expectedEvents.formUnion(d.events) }
            if kept(d, days: 14) { expectedLogs.formUnion(d.infoLogs + d.incidentLogs) }
            for id in d.verboseLogs {
                if kept(d, days: 3) {
                    expectedLogs.insert(id)
                    #expect(logs[id]?.contains("\"expired\"") == false, "verbose \(id) scrubbed early, \(at)")
                } else if let text = logs[id] {
                    // Past its age a verbose record is gone, or a tombstone where its row stays.
                    #expect(text.contains("\"expired\":true") && !text.contains("jane"), "verbose \(id) kept its content, \(at)")
                    #expect(kept(d, days: 14), "verbose \(id) outlived the logs age, \(at)")
                    expectedLogs.insert(id)
                }
            }
            if kept(d, days: 7) { expectedPPE.events.formUnion(d.ppeEvents) }
            if kept(d, days: 2) { expectedPPE.logs.formUnion(d.ppeVerbose) }
            let incident = try await store.incident(id: d.incidentID)
            #expect((incident != nil) == kept(d, days: 14), "incident of \(at)")
        }
        #expect(Set(events.keys) == expectedEvents, "prod events at \(Timestamp.format(milliseconds: now))")
        #expect(Set(logs.keys) == expectedLogs, "prod logs at \(Timestamp.format(milliseconds: now))")
        #expect(Set(ppeEvents.keys) == expectedPPE.events, "PPE events at \(Timestamp.format(milliseconds: now))")
        #expect(Set(ppeLogs.keys) == expectedPPE.logs, "PPE logs at \(Timestamp.format(milliseconds: now))")

        // Retry ids live exactly as long as their events; rollups 35 days after their last record.
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("prod/records.sqlite").path)
        let (ids, rollupDays, retryKey) = try await queue.read { db in
            (
                Set(try Data.fetchAll(db, sql: "SELECT key FROM event_id WHERE kind = 0")),
                Set(try Int64.fetchAll(db, sql: "SELECT DISTINCT lastReceivedAt FROM event_rollup")),
                try RetryKey.load(db)
            )
        }
        try queue.close()
        let keptIDs = days.filter { kept($0, days: 30) }.flatMap(\.eventIDs)
        #expect(
            ids == Set(keptIDs.map { retryKey.key(kind: 0, appId: "com.app", eventId: $0, incident: "") }),
            "retry ids at \(Timestamp.format(milliseconds: now))")
        #expect(
            rollupDays == Set(days.filter { kept($0, days: 35) }.map(\.receivedAt)), "rollups at \(Timestamp.format(milliseconds: now))")
    }

    @Test func fortyDaysOfRetention() async throws {
        let clock = SimulatedClock(Self.day0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("travel-\(UUID().uuidString)")
        let store = try SQLiteRecordStore(
            directory: directory, configuration: StoreConfiguration(compaction: CompactionPolicy(minimumAgeSeconds: 0)), clock: clock,
            metrics: NOOPMetricsHandler.instance)
        let committer = Task { try await store.committer.run() }
        let retention = RetentionService(
            store: store, policy: Self.policy, logger: Logger(label: "t"), clock: clock, metrics: NOOPMetricsHandler.instance)
        var days: [Day] = []
        for d in 0..<40 {
            let noon = Self.day0 + Int64(d) * Self.day + 12 * Self.hour
            clock.set(noon)
            days.append(try await Self.store(day: d, at: noon, in: store))
            try await store.compactor.compactOnce()
            for quarter in 0..<4 {
                let now = noon + Int64(quarter) * 6 * Self.hour
                clock.set(now)
                try await retention.sweep(.timer)
                try await Self.check(store, days, now: now, directory: directory)
            }
        }
        // A client's retry: of an event stored 2 days ago it is recognised; of one whose event
        // retention took, it is stored again.
        let now = clock.nowMilliseconds()
        let recent = try await store.append([Self.event(38, 0, time: now)], kind: .event, env: .prod, receivedAt: now, incident: nil)
        let expired = try await store.append([Self.event(0, 0, time: now)], kind: .event, env: .prod, receivedAt: now, incident: nil)
        #expect(recent.duplicates == 1 && recent.stored == 0)
        #expect(expired.stored == 1)
        await store.committer.close()
        committer.cancel()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A ClickHouse spool's retry ids outlive their shipped batches by the retry window
    /// (seven days), judged by the marks each maintenance pass leaves, and no longer.
    @Test func aSpoolsRetryIDsLeaveSevenDaysAfterShipping() async throws {
        let clock = SimulatedClock(Self.day0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)")
        let spool = try SQLiteRecordStore(directory: directory, clock: clock, metrics: NOOPMetricsHandler.instance)
        let committer = Task { try await spool.committer.run() }
        var shippedAt: [String: Int64] = [:]
        for d in 0..<20 {
            let noon = Self.day0 + Int64(d) * Self.day + 12 * Self.hour
            clock.set(noon)
            let events = (0..<3).map { Self.event(d, $0, time: noon) }
            _ = try await spool.append(events, kind: .event, env: .prod, receivedAt: noon, incident: nil)
            let batches = try await spool.unshippedBatches(env: .prod, after: 0, limit: 100)
            try await spool.removeShipped(env: .prod, batchIDs: batches.map(\.batchID))
            for e in events { shippedAt[e.eventId!] = noon }
            for quarter in 0..<4 {
                let now = noon + Int64(quarter) * 6 * Self.hour
                clock.set(now)
                _ = try await spool.maintain(env: .prod, limits: Self.policy.prod, nowMs: now)
                let queue = try DatabaseQueue(path: directory.appendingPathComponent("prod/records.sqlite").path)
                let (ids, retryKey) = try await queue.read {
                    (Set(try Data.fetchAll($0, sql: "SELECT key FROM event_id")), try RetryKey.load($0))
                }
                try queue.close()
                let expected = Set(
                    shippedAt.filter { now < $0.value + SpoolRetryWindow.seconds * 1000 }.keys.map {
                        retryKey.key(kind: 0, appId: "com.app", eventId: $0, incident: "")
                    })
                #expect(ids == expected, "retry ids at \(Timestamp.format(milliseconds: now))")
            }
        }
        await spool.committer.close()
        committer.cancel()
        try? FileManager.default.removeItem(at: directory)
    }
}
