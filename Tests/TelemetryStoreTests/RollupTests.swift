import Foundation
import GRDB
import Logging
import Metrics
import StoreCore
import Synchronization
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// The hourly event rollups agree with the records they summarise: per hour, per window, after
/// dedupe, across environments, after a rebuild, and through retention as documented.
@Suite struct RollupTests {
    static let hour = EventRollupScope.hourMs
    /// 2026-11-01T00:00Z: every seeded event lies within 30 hours after it.
    static let base: Int64 = 1_793_491_200_000
    static let names = [EventName.enrollmentCall, EventName.appLaunch, EventName.intuneAction]

    static func event(
        _ name: String, app: String, detail: String, time: Int64, eventId: String?, statusCode: Int? = nil, succeeded: Bool? = nil,
        durationMs: Double? = nil
    ) -> DecodedRecord {
        var w = JSONWriter()
        w.beginObject()
        w.field("name", name)
        w.field("appId", app)
        w.field("time", Timestamp.format(milliseconds: time))
        if let eventId { w.field("eventId", eventId) }
        w.endObject()
        return DecodedRecord(
            json: w.bytes,
            keys: RecordKeys(
                time: time, appId: app, deviceId: "d", name: name, detail: detail, statusCode: statusCode, durationMs: durationMs,
                succeeded: succeeded),
            flags: .unspecified, eventId: eventId)
    }

    /// `count` events of the rolled-up names and some of another name, over 30 hours, with
    /// every optional field sometimes absent and durations both whole and fractional.
    static func seed(_ count: Int, prefix: String, random: inout SeededRandom) -> [DecodedRecord] {
        (0..<count).map { i in
            let name = i % 17 == 0 ? "SomethingElse" : random.pick(names)
            let time = base + Int64(random.below(30 * 3_600_000))
            let code: Int? = random.below(8) == 0 ? nil : random.pick([100, 101, 102, 200, 203, 216, 999])
            let succeeded: Bool? = random.pick([nil, nil, true, false])
            let duration: Double? =
                random.below(6) == 0 ? nil : random.below(2) == 0 ? Double(random.below(3000)) : Double(random.below(900_000)) / 7
            return event(
                name, app: random.pick(["com.a", "com.b", "com.c"]), detail: random.pick(["", "enroll", "checkIn", "MDM"]), time: time,
                eventId: "\(prefix)-\(i)", statusCode: code, succeeded: succeeded, durationMs: duration)
        }
    }

    /// What a stats computation sees, reduced to totals per `width` (an hour unless told) so
    /// that an answer from rollups and one from records can be compared whole.
    struct Digest: Equatable {
        var width = RollupTests.hour
        struct Key: Hashable {
            var hour: Int64
            var appId: String
            var detail: String
            var statusCode: Int?
            var succeeded: Bool?
        }
        struct Group: Hashable {
            var hour: Int64
            var appId: String
            var detail: String
        }
        var counts: [Key: Int] = [:]
        var durations: [Group: LatencySketch] = [:]

        mutating func add(_ input: EventStatsInput) {
            switch input {
            case .record(let k):
                let h = k.time.flooredToMultiple(of: width)
                counts[Key(hour: h, appId: k.appId, detail: k.detail, statusCode: k.statusCode, succeeded: k.succeeded), default: 0] += 1
                if let d = k.durationMs { durations[Group(hour: h, appId: k.appId, detail: k.detail), default: .init()].add(d) }
            case .counts(let r):
                counts[
                    Key(
                        hour: r.start.flooredToMultiple(of: width), appId: r.appId, detail: r.detail, statusCode: r.statusCode,
                        succeeded: r.succeeded), default: 0] +=
                    r.count
            case .durations(let r):
                durations[Group(hour: r.start.flooredToMultiple(of: width), appId: r.appId, detail: r.detail), default: .init()].merge(
                    r.durations)
            }
        }
    }

    /// The digest of `scan`, and how many inputs came from rollup rows.
    static func digest(_ store: SQLiteRecordStore, _ scan: EventStatsScan, width: Int64 = hour) async throws -> (
        digest: Digest, rollupRows: Int
    ) {
        let state = Mutex((Digest(width: width), 0))
        try await store.eventStats(scan) { input in
            state.withLock {
                $0.0.add(input)
                if case .record = input {} else { $0.1 += 1 }
            }
        }
        return state.withLock { $0 }
    }

    static func bothWays(
        _ store: SQLiteRecordStore, env: TelemetryEnvironment = .prod, name: String, since: Int64, until: Int64, app: String? = nil
    )
        async throws -> (rollups: Digest, records: Digest, rollupRows: Int)
    {
        let viaRollups = try await digest(
            store, EventStatsScan(env: env, name: name, since: since, until: until, app: app, rollupGrain: .hour))
        let viaRecords = try await digest(
            store, EventStatsScan(env: env, name: name, since: since, until: until, app: app, rollupGrain: nil))
        return (viaRollups.digest, viaRecords.digest, viaRollups.rollupRows)
    }

    @Test func randomWindowsAgreeWithTheRecords() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 97))
        var random = SeededRandom(seed: 13)
        let records = Self.seed(3000, prefix: "s", random: &random)
        for (n, chunk) in stride(from: 0, to: records.count, by: 400).map({ records[$0..<min($0 + 400, records.count)] }).enumerated() {
            _ = try await f.store.append(Array(chunk), kind: .event, env: .prod, receivedAt: Self.base + Int64(n), incident: nil)
        }
        var usedRollups = 0
        for _ in 0..<60 {
            // Windows starting and ending anywhere, on the hour or not, some beyond the data.
            var since = Self.base - Self.hour + Int64(random.below(32 * 3_600_000))
            var until = since + Int64(random.below(20 * 3_600_000))
            if random.below(3) == 0 { since = EventRollupScope.hour(of: since) }
            if random.below(3) == 0 { until = EventRollupScope.hour(of: until) - 1 }
            let app: String? = random.pick([nil, "com.a", "com.c"])
            let name = random.pick(Self.names)
            let r = try await Self.bothWays(f.store, name: name, since: since, until: until, app: app)
            #expect(r.rollups == r.records, "\(name) \(since)...\(until) app \(app ?? "any")")
            usedRollups += r.rollupRows
        }
        #expect(usedRollups > 1000, "the windows were answered mostly from rollups")
        // The whole data set: every rolled-up event counted once.
        let all = try await Self.bothWays(f.store, name: EventName.enrollmentCall, since: Self.base, until: Self.base + 30 * Self.hour - 1)
        #expect(all.rollups == all.records)
        #expect(all.rollups.counts.values.reduce(0, +) == records.filter { $0.keys.name == EventName.enrollmentCall }.count)
        await f.close()
    }

    @Test func duplicatesAreNotCounted() async throws {
        let f = try StoreFixture()
        let calls = (0..<10).map {
            Self.event(
                EventName.enrollmentCall, app: "com.a", detail: "enroll", time: Self.base + Int64($0), eventId: "e\($0)", statusCode: 100,
                durationMs: 5)
        }
        _ = try await f.store.append(calls, kind: .event, env: .prod, receivedAt: Self.base, incident: nil)
        // A retry of half of them plus two new ones, then the same again in one request.
        let retry =
            Array(calls[0..<5])
            + (10..<12).map {
                Self.event(
                    EventName.enrollmentCall, app: "com.a", detail: "enroll", time: Self.base + Int64($0), eventId: "e\($0)",
                    statusCode: 100, durationMs: 5)
            }
        let outcome = try await f.store.append(retry + retry, kind: .event, env: .prod, receivedAt: Self.base, incident: nil)
        #expect(outcome.stored == 2 && outcome.duplicates == 12)
        let r = try await Self.bothWays(f.store, name: EventName.enrollmentCall, since: Self.base, until: Self.base + Self.hour - 1)
        #expect(r.rollupRows > 0)
        #expect(r.rollups == r.records)
        #expect(r.rollups.counts.values.reduce(0, +) == 12)
        #expect(r.rollups.durations.values.map(\.total) == [12])
        await f.close()
    }

    @Test func ppeRollupsLiveInThePPEDatabaseOnly() async throws {
        let f = try StoreFixture()
        let launch = { (i: Int) in
            Self.event(EventName.appLaunch, app: "com.a", detail: "MDM", time: Self.base + Int64(i), eventId: "p\(i)")
        }
        // One request for PPE alone, one spanning both environments (staged, then published).
        _ = try await f.store.append((0..<4).map(launch), kind: .event, env: .ppe, receivedAt: Self.base, incident: nil)
        _ = try await f.store.append(
            AppendRequest(kind: .event, receivedAt: Self.base, records: [.ppe: (4..<6).map(launch), .prod: (6..<9).map(launch)]))
        let window = (since: Self.base, until: Self.base + Self.hour - 1)
        let ppe = try await Self.bothWays(f.store, env: .ppe, name: EventName.appLaunch, since: window.since, until: window.until)
        let prod = try await Self.bothWays(f.store, env: .prod, name: EventName.appLaunch, since: window.since, until: window.until)
        #expect(ppe.rollups == ppe.records && prod.rollups == prod.records)
        #expect(ppe.rollups.counts.values.reduce(0, +) == 6)
        #expect(prod.rollups.counts.values.reduce(0, +) == 3, "the published staged part is rolled up in prod")
        for (env, expected) in [(TelemetryEnvironment.prod, 3), (.ppe, 6)] {
            let rows = try await f.store.databases[env].pool.read { db in
                try Int.fetchOne(db, sql: "SELECT sum(count) FROM event_rollup") ?? 0
            }
            #expect(rows == expected, "\(env)")
        }
        await f.close()
    }

    @Test func aRebuildFromTheRecordsGivesTheSameRollups() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 50))
        var random = SeededRandom(seed: 7)
        _ = try await f.store.append(
            Self.seed(1500, prefix: "r", random: &random), kind: .event, env: .prod, receivedAt: Self.base, incident: nil)
        let window = (since: Self.base, until: Self.base + 30 * Self.hour - 1)
        let before = try await Self.bothWays(f.store, name: EventName.enrollmentCall, since: window.since, until: window.until)
        #expect(before.rollups == before.records)
        let db = f.store.databases[.prod]
        try await db.pool.write { try $0.execute(sql: "DELETE FROM event_rollup; DELETE FROM event_latency_rollup") }
        let lost = try await Self.bothWays(f.store, name: EventName.enrollmentCall, since: window.since, until: window.until)
        #expect(lost.rollups.counts.isEmpty, "without rollup rows the whole hours count nothing")
        let rebuilt = try await f.store.rebuildRollups(env: .prod)
        #expect(rebuilt.records == 1500 - (0..<1500).filter { $0 % 17 == 0 }.count)
        #expect(rebuilt.countRows > 0 && rebuilt.latencyRows > 0)
        let after = try await Self.bothWays(f.store, name: EventName.enrollmentCall, since: window.since, until: window.until)
        #expect(after.rollups == before.rollups)
        // Rebuilding twice changes nothing.
        #expect(try await f.store.rebuildRollups(env: .prod) == rebuilt)
        await f.close()
    }

    @Test func rollupsOutliveTheRecordsUntilTheirOwnAge() async throws {
        let f = try StoreFixture()
        let day: Int64 = 86_400_000
        let now = Self.base + 100 * day
        let calls = (0..<5).map {
            Self.event(
                EventName.enrollmentCall, app: "com.a", detail: "enroll", time: Self.base + Int64($0), eventId: "o\($0)", statusCode: 216)
        }
        _ = try await f.store.append(calls, kind: .event, env: .prod, receivedAt: Self.base, incident: nil)
        let window = (since: Self.base, until: Self.base + Self.hour - 1)
        var limits = RetentionPolicy.Limits(eventsMaxAge: 30 * 86_400, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: nil)
        #expect(limits.rollupsMaxAge == RetentionPolicy.Limits.defaultRollupsMaxAge)
        let removed = try await f.store.retention[.prod].apply(limits, nowMs: now)
        // The minute rows go (their minutes are far older than the kept two days), the hourly stay.
        #expect(removed.records == 5 && removed.rollupRows == 1)
        let kept = try await Self.bothWays(f.store, name: EventName.enrollmentCall, since: window.since, until: window.until)
        #expect(kept.records.counts.isEmpty, "the records are gone")
        #expect(kept.rollups.counts.values.reduce(0, +) == 5, "whole hours still count them")
        limits.rollupsMaxAge = 90 * 86_400
        let expired = try await f.store.retention[.prod].apply(limits, nowMs: now)
        #expect(expired.rollupRows == 1)
        let gone = try await Self.bothWays(f.store, name: EventName.enrollmentCall, since: window.since, until: window.until)
        #expect(gone.rollups.counts.isEmpty)
        await f.close()
    }

    /// A store written before rollups existed gets them computed from its records when it is
    /// opened by a daemon that has them.
    @Test func theMigrationRollsUpExistingRecords() async throws {
        let f = try StoreFixture()
        var random = SeededRandom(seed: 21)
        _ = try await f.store.append(
            Self.seed(500, prefix: "m", random: &random), kind: .event, env: .prod, receivedAt: Self.base, incident: nil)
        let window = (since: Self.base, until: Self.base + 30 * Self.hour - 1)
        let before = try await Self.bothWays(f.store, name: EventName.appLaunch, since: window.since, until: window.until)
        try await f.store.databases[.prod].pool.write { db in
            try db.execute(sql: "DROP TABLE event_rollup; DROP TABLE event_latency_rollup")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v3-event-rollups'")
        }
        await f.store.committer.close()
        let reopened = try SQLiteRecordStore(directory: f.directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let after = try await Self.bothWays(reopened, name: EventName.appLaunch, since: window.since, until: window.until)
        #expect(after.rollupRows > 0)
        #expect(after.rollups == before.rollups)
        try? FileManager.default.removeItem(at: f.directory)
    }
}

/// The duration sketch's rounding: monotone, exact for short whole milliseconds, and within
/// the documented relative error, so percentiles from it are the exact ones rounded.
@Suite struct LatencySketchTests {
    @Test func roundingIsMonotoneAndWithinTheBound() {
        var random = SeededRandom(seed: 5)
        var values = (0..<5000).map { _ in Double(random.below(10_000_000)) / Double(1 + random.below(1000)) }
        values += [0, -0.0, -3.5, -1000, 1e-9, 1e12, 255, 256, 257]
        let sorted = values.sorted()
        for (a, b) in zip(sorted, sorted.dropFirst()) {
            #expect(LatencySketch.rounded(a) <= LatencySketch.rounded(b), "\(a) \(b)")
        }
        for v in values where v > 0 {
            let r = LatencySketch.rounded(v)
            #expect(r <= v && r >= v * (1 - LatencySketch.relativeError), "\(v) -> \(r)")
        }
        for ms in 0..<256 { #expect(LatencySketch.rounded(Double(ms)) == Double(ms)) }
        #expect(LatencySketch.rounded(1000) == 1000 && LatencySketch.rounded(4000) == 4000)
        #expect(LatencySketch.rounded(5000) == 4992)
        #expect(LatencySketch.rounded(257) == 256)
    }

    @Test func percentilesAreTheExactNearestRankRounded() throws {
        var random = SeededRandom(seed: 11)
        for size in [1, 2, 3, 10, 99, 1000] {
            let values = (0..<size).map { _ in Double(random.below(100_000)) / 10 }
            var sketch = LatencySketch()
            var halves = (LatencySketch(), LatencySketch())
            for (i, v) in values.enumerated() {
                sketch.add(v)
                if i % 2 == 0 { halves.0.add(v) } else { halves.1.add(v) }
            }
            halves.0.merge(halves.1)
            #expect(halves.0 == sketch, "merging equals adding")
            #expect(try LatencySketch(decoding: sketch.encoded()) == sketch, "the stored form round-trips")
            let s = values.sorted()
            for p in [0.5, 0.95, 0.99, 1.0] {
                let exact = s[max(Int((p * Double(s.count)).rounded(.up)), 1) - 1]
                #expect(sketch.percentile(p) == LatencySketch.rounded(exact), "size \(size) p\(p)")
            }
        }
        #expect(LatencySketch().percentile(0.5) == nil)
    }

    /// Damaged stored sketches are refused rather than read as other counts: a bucket count
    /// past the bytes, a repeated key, a zero count, a key past the range.
    @Test func damagedStoredFormsAreRefused() {
        for bad: [UInt8] in [[0x7F], [2, 5, 1, 0, 1], [1, 5, 0], [1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 1]] {
            #expect(throws: StoreError.self) { try LatencySketch(decoding: bad) }
        }
    }

    /// The dense accumulator the stats answers use gives the percentiles of the sketch with
    /// the same buckets, whatever order values and sketches arrive in (below and above what
    /// it already spans).
    @Test func theAccumulatorAnswersAsTheMergedSketch() {
        var random = SeededRandom(seed: 21)
        var whole = LatencySketch()
        var accumulator = LatencyAccumulator()
        var other = LatencyAccumulator()
        for round in 0..<200 {
            var hour = LatencySketch()
            for _ in 0..<Int(random.below(30)) {
                let v = Double(random.below(100_000)) / Double(1 + random.below(100)) * (round % 7 == 0 ? -1 : 1)
                hour.add(v)
                whole.add(v)
            }
            if round % 3 == 0 {
                let v = Double(random.below(5000))
                whole.add(v)
                if round % 2 == 0 { accumulator.add(v) } else { other.add(v) }
            }
            if round % 2 == 0 { accumulator.merge(hour) } else { other.merge(hour) }
        }
        accumulator.merge(other)
        #expect(accumulator.total == whole.total)
        let ps = [0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0]
        #expect(accumulator.percentiles(ps) == whole.percentiles(ps))
        #expect(LatencyAccumulator().percentiles([0.5]) == [nil])
    }
}
