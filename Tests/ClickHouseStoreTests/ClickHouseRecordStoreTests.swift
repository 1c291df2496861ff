import Foundation
import Metrics
import MetricsTestKit
import StoreCore
import Synchronization
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore
@testable import TelemetryStore

/// The read path of the ClickHouse backend against a real private 18.16 server, compared
/// with the embedded store's answers over the same records wherever both must agree.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseRecordStoreTests {
    /// The embedded store alone, as the reference answer.
    final class Reference: @unchecked Sendable {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chref-\(UUID().uuidString)")
        let store: SQLiteRecordStore
        let task: Task<Void, any Error>
        init() throws {
            store = try SQLiteRecordStore(directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
            let committer = store.committer
            task = Task { try await committer.run() }
        }
        func close() async {
            await store.committer.close()
            task.cancel()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static let t0: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    static var mixedEvents: [DecodedRecord] {
        (0..<60).map { (i: Int) -> DecodedRecord in
            let app = i % 3 == 0 ? "com.a" : "com.b"
            let identity = i % 5 == 0 ? "User\(i % 2)@Contoso.com" : ""
            let name = i % 2 == 0 ? "EnrollmentCall" : "AppLaunch"
            let time: Int64 = t0 + Int64(i) * 60_000
            let code = i % 7 == 0 ? 400 : 200
            let text = i % 6 == 0 ? "Needle-\(i)" : "hay"
            return Records.event(app: app, device: "dev-\(i % 4)", identity: identity, name: name, time: time, statusCode: code, text: text)
        }
    }

    static var mixedLogs: [DecodedRecord] {
        let levels: [LogLevel?] = [nil, .verbose, .info, .warning, .error]
        return (0..<25).map { i in
            Records.log(app: "com.a", device: "dev-\(i % 2)", level: levels[i % 5], time: t0 + Int64(i) * 1000, message: "line \(i)")
        }
    }

    @Test func filtersAnswerLikeTheEmbeddedStoreAndAReadSeesWhatWasJustAcknowledged() async throws {
        // A slow forwarder: without the fence, a read right after the append would miss it.
        let f = try await ClickHouseStoreFixture(database: "filters")
        let reference = try Reference()
        defer { Task { await reference.close() } }
        for (kind, records) in [(RecordKind.event, Self.mixedEvents), (.log, Self.mixedLogs)] {
            try await f.append(records, kind: kind)
            _ = try await reference.store.append(records, kind: kind, env: .prod, receivedAt: Self.t0, incident: nil)
        }
        let queries: [RecordQuery] = [
            RecordQuery(kind: .event, limit: 1000),
            RecordQuery(kind: .event, app: "com.a", limit: 1000),
            RecordQuery(kind: .event, device: "dev-2", limit: 1000),
            RecordQuery(kind: .event, identity: "USER0@contoso.COM", limit: 1000),
            RecordQuery(kind: .event, name: "EnrollmentCall", statusCode: 400, limit: 1000),
            RecordQuery(kind: .event, since: Self.t0 + 10 * 60_000, until: Self.t0 + 20 * 60_000, limit: 1000),
            RecordQuery(kind: .event, contains: "needle", limit: 1000),
            RecordQuery(kind: .event, contains: "NEEDLE", limit: 3, order: .asc),
            RecordQuery(kind: .log, minLevel: .info, limit: 1000),
            RecordQuery(kind: .log, minLevel: .warning, limit: 1000, order: .asc),
            RecordQuery(kind: .log, device: "dev-1", minLevel: .verbose, limit: 7),
        ]
        for q in queries {
            let got = try await f.store.query(q).records
            let want = try await reference.store.query(q).records
            #expect(got.map(\.json) == want.map(\.json), "\(q)")
            #expect(got.map(\.keys) == want.map(\.keys), "\(q)")
            #expect(!got.isEmpty, "\(q)")
        }
        // Right after an acknowledged append, before any wait: the fence lets it through.
        let fresh = Records.event(app: "com.fresh", device: "x", time: Self.t0, text: "just-acked")
        try await f.append([fresh])
        #expect(try await f.store.query(RecordQuery(kind: .event, app: "com.fresh")).records.map(\.json) == [fresh.json])
        #expect(try f.metrics.expectCounter(MetricName.clickHouseReadFenceTimeouts.rawValue).totalValue == 0)
        await f.close()
    }

    @Test func cursorPagesCoverEveryRecordOnceInBothOrdersAndDuplicatesShowOnce() async throws {
        let f = try await ClickHouseStoreFixture(database: "paging", forwarding: false)
        // Several batches over several receive seconds, so ids interleave batches and seconds.
        for b in 0..<5 {
            let batch = (0..<11).map { i in Records.event(app: "com.p", device: "d", time: Self.t0 + Int64(b * 11 + i)) }
            try await f.append(batch, receivedAt: Self.t0 + Int64(b) * 700)
        }
        try await f.shipNow()
        // A redelivered block: every row a second time, in another part.
        _ = try await f.server.query("INSERT INTO paging.records SELECT * FROM paging.records")
        #expect(try await f.server.query("SELECT count() FROM paging.records FORMAT TSV") == "110\n")
        for order in [RecordQuery.Order.asc, .desc] {
            for limit in [1, 4, 10, 55, 200] {
                let (records, pages) = try await ClickHouseStoreFixture.allPages(
                    f.store, RecordQuery(kind: .event, limit: limit, order: order))
                let ids = records.map(\.id)
                #expect(ids.count == 55, "\(order) \(limit)")
                #expect(Set(ids).count == 55)
                #expect(ids == (order == .asc ? ids.sorted() : ids.sorted(by: >)))
                #expect(pages == max(1, (55 + limit - 1) / limit), "\(order) \(limit)")
            }
        }
        // The ids are RecordIDs: receive second and collector inside.
        let newest = try await f.store.latestID(env: .prod)
        #expect(RecordID(rawValue: newest).collector == CollectorID(3))
        #expect(RecordID(rawValue: newest).receivedSecondMs == (Self.t0 + 4 * 700) / 1000 * 1000)
        // Stats count the duplicated rows once too.
        let total = Mutex(0)
        try await f.store.eventStats(
            EventStatsScan(env: .prod, name: "AppLaunch", since: Self.t0, until: Self.t0 + 100, app: nil, rollupGrain: nil)
        ) { input in
            if case .counts(let row) = input { total.withLock { $0 += row.count } }
        }
        #expect(total.withLock { $0 } == 55)
        await f.close()
    }

    @Test func productionReadsNeverSeePPERecords() async throws {
        let f = try await ClickHouseStoreFixture(database: "envs")
        try await f.append([Records.event(app: "com.prod", device: "p", time: Self.t0)], env: .prod)
        try await f.append([Records.event(app: "com.ppe", device: "q", time: Self.t0)], env: .ppe)
        let prod = try await f.store.query(RecordQuery(kind: .event, env: .prod))
        let ppe = try await f.store.query(RecordQuery(kind: .event, env: .ppe))
        #expect(prod.records.map(\.keys.appId) == ["com.prod"])
        #expect(ppe.records.map(\.keys.appId) == ["com.ppe"])
        #expect(ppe.records.allSatisfy { $0.env == .ppe })
        #expect(try await f.server.query("SELECT app FROM envs_ppe.records FORMAT TSV") == "com.ppe\n")
        await f.close()
    }

    /// Counts per bucket and status code, and duration percentiles per bucket and operation.
    struct Summary: Equatable {
        var counts: [String: Int] = [:]
        var sketches: [String: LatencySketch] = [:]

        mutating func add(_ input: EventStatsInput, bucket: (Int64) -> Int64) {
            switch input {
            case .record(let k):
                counts["\(bucket(k.time))|\(k.appId)|\(k.detail)|\(k.statusCode ?? -1)|\(String(describing: k.succeeded))", default: 0] += 1
                if let d = k.durationMs { sketches["\(bucket(k.time))|\(k.detail)", default: .init()].add(d) }
            case .counts(let r):
                counts["\(bucket(r.start))|\(r.appId)|\(r.detail)|\(r.statusCode ?? -1)|\(String(describing: r.succeeded))", default: 0] +=
                    r.count
            case .durations(let r): sketches["\(bucket(r.start))|\(r.detail)", default: .init()].merge(r.durations)
            }
        }

        var percentiles: [String: [Double?]] { sketches.mapValues { $0.percentiles([0.5, 0.95, 0.99]) } }
    }

    @Test(arguments: [EventRollupScope.hourMs, 900_000, 86_400_000])
    func statsEqualTheEmbeddedStoresOverTheSameEvents(bucketMs: Int64) async throws {
        let f = try await ClickHouseStoreFixture(database: "stats")
        let reference = try Reference()
        defer { Task { await reference.close() } }
        var random = SeededRandom(seed: 42)
        var events: [DecodedRecord] = []
        for i in 0..<400 {
            let code = [100, 100, 100, 400, 503, 2004][Int(random.next() % 6)]
            let duration: Double? = i % 9 == 0 ? nil : [300, 1000, 0.5, 12.34, 4000.25][i % 5] * Double(1 + random.next() % 50) / 7
            events.append(
                Records.event(
                    app: i % 4 == 0 ? "com.x" : "com.y", device: "d\(i % 9)", name: i % 10 == 0 ? "AppLaunch" : "EnrollmentCall",
                    time: Self.t0 - 3_600_000 + Int64(i) * 37_000, statusCode: code, durationMs: duration,
                    succeeded: i % 3 == 0 ? nil : code == 100, detail: ["enroll", "checkin", "unenroll"][i % 3]))
        }
        try await f.append(events)
        _ = try await reference.store.append(events, kind: .event, env: .prod, receivedAt: Self.t0, incident: nil)
        let since = Self.t0 - 1_800_000
        let until = Self.t0 + 4 * 3_600_000 + 123
        let bucket: @Sendable (Int64) -> Int64 = { t in
            let q = t / bucketMs
            return (t % bucketMs < 0 ? q - 1 : q) * bucketMs
        }
        for app in [nil, "com.x"] {
            let scan = EventStatsScan(
                env: .prod, name: "EnrollmentCall", since: since, until: until, app: app,
                // As the stats parameters ask: the coarsest rollup period inside one bucket.
                rollupGrain: EventRollupGrain.coarsest(within: bucketMs),
                bucketMs: bucketMs)
            let got = Mutex(Summary())
            try await f.store.eventStats(scan) { input in got.withLock { $0.add(input, bucket: bucket) } }
            let want = Mutex(Summary())
            try await reference.store.eventStats(scan) { input in
                if case .record(let k) = input, let app, k.appId != app { return }
                want.withLock { $0.add(input, bucket: bucket) }
            }
            let (g, w) = (got.withLock { $0 }, want.withLock { $0 })
            #expect(g.counts == w.counts)
            #expect(g.percentiles == w.percentiles)
            #expect(g.counts.values.reduce(0, +) > 50)
            #expect(g.counts.keys.contains { $0.contains("|400|") })
        }
        await f.close()
    }

    @Test func followAnnouncesOnlyIdsWhoseReceiveSecondIsLagOld() async throws {
        #expect(FollowWatermark.bound(nowMs: Self.t0 + 2_999, lagMs: 2000) == RecordID.lowerBound(receivedAtMs: Self.t0).rawValue)
        #expect(FollowWatermark.bound(nowMs: Self.t0 + 3_000, lagMs: 2000) == RecordID.lowerBound(receivedAtMs: Self.t0 + 1000).rawValue)
        let clock = SettableClock(Self.t0 + 500)
        var tuning = ClickHouseRecordStore.Tuning()
        tuning.followPoll = .milliseconds(30)
        let f = try await ClickHouseStoreFixture(database: "follow", tuning: tuning, clock: clock)
        let ids = try await f.append((0..<3).map { Records.event(app: "com.f", device: "d", time: Self.t0 + Int64($0)) })
        #expect(try await f.store.query(RecordQuery(kind: .event)).records.count == 3)
        let newest = try await f.store.latestID(env: .prod)
        #expect(ids.count == 3)
        let notices = f.store.commits()
        let seen = Mutex<[CommitNotice]>([])
        let listener = Task {
            for await n in notices { seen.withLock { $0.append(n) } }
        }
        // Received in second t0 (at t0 + 500); at t0 + 2500 that second ended only 1.5 s ago.
        clock.set(Self.t0 + 2_500)
        try await Task.sleep(for: .milliseconds(400))
        #expect(seen.withLock { $0 }.allSatisfy { $0.lastId < newest })
        clock.set(Self.t0 + 3_000)
        for _ in 0..<100 where !seen.withLock({ $0.contains { $0.lastId == newest } }) { try await Task.sleep(for: .milliseconds(30)) }
        let announced = seen.withLock { $0 }
        #expect(announced.contains { n in n.env == TelemetryEnvironment.prod && n.lastId == newest && n.kinds.contains(RecordKind.event) })
        listener.cancel()
        await f.close()
    }

    @Test func unreachableClickHouseFailsTheReadAfterTheBoundedFence() async throws {
        var tuning = ClickHouseRecordStore.Tuning()
        tuning.fenceBound = .milliseconds(300)
        let f = try await ClickHouseStoreFixture(database: "down", tuning: tuning, forwarding: false)
        try f.server.stop(timeoutSeconds: 3)
        try await f.append([Records.event(app: "com.d", device: "d", time: Self.t0)])
        let started = ContinuousClock.now
        await #expect {
            _ = try await f.store.query(RecordQuery(kind: .event))
        } throws: { error in
            guard case .unreachable = error as? ClickHouseError else { return false }
            return true
        }
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(try f.metrics.expectCounter(MetricName.clickHouseReadFenceTimeouts.rawValue).totalValue == 1)
        // The acknowledged record is still in the spool, shipped once ClickHouse is back.
        #expect(try await f.spool.depth(env: .prod).records == 1)
        await f.close()
    }
}
