import Foundation
import GRDB
import StoreCore
import TelemetryModel
import Testing

@testable import TelemetryStore

/// Batches encoded by the request before it queues must store exactly what the committer
/// would have stored: the survivors of dedupe, numbered in the order their batches hold them
/// (arrival order, for one app), with rollups counting only them.
@Suite struct PreparedBatchTests {
    private static func events(_ ids: Range<Int>, app: String = "com.app") -> [DecodedRecord] {
        ids.map { StoreFixture.event(app: app, device: "d\($0 % 7)", time: 1_000 + Int64($0), eventId: "e\($0)", statusCode: 100) }
    }

    private static func batches(_ f: StoreFixture) async throws -> [(firstSeq: Int64, count: Int)] {
        try await f.store.databases[.prod].pool.read { db in
            try Row.fetchAll(db, sql: "SELECT firstSeq, count FROM batch ORDER BY firstSeq").map { ($0["firstSeq"], $0["count"]) }
        }
    }

    @Test func aPreparedGroupWithRetriesStoresOnlyTheSurvivors() async throws {
        let f = try StoreFixture()
        let first = try await f.store.append(Self.events(0..<100), kind: .event, env: .prod, receivedAt: 5, incident: nil)
        #expect(first.stored == 100)
        // 30 retries of stored events inside a group large enough to be prepared.
        let second = try await f.store.append(Self.events(70..<170), kind: .event, env: .prod, receivedAt: 6, incident: nil)
        #expect(second.stored == 70)
        #expect(second.duplicates == 30)
        #expect(second.ids == Array(101...170))

        let all = try await f.store.query(RecordQuery(kind: .event, limit: 1000))
        #expect(all.records.count == 170)
        #expect(Set(all.records.map(\.keys.time)) == Set((0..<170).map { 1_000 + Int64($0) }))
        let stored = try await Self.batches(f)
        #expect(stored.map(\.count) == [100, 70])
        #expect(stored.map(\.firstSeq) == [1, 101])
        let rolledUp = try await f.store.databases[.prod].pool.read { try Int.fetchOne($0, sql: "SELECT sum(count) FROM event_rollup") }
        #expect(rolledUp == 170)
        await f.close()
    }

    @Test func smallGroupsArePackedAndAPreparedGroupKeepsItsPlace() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(minPreparedRecords: 50))
        let configuration = f.store.databases[.prod].configuration
        func group(_ ids: Range<Int>) throws -> BatchCommitter.Group {
            try BatchCommitter.Group(records: Self.events(ids), kind: .event, receivedAt: 7).prepared(configuration)
        }
        let groups = [try group(0..<5), try group(5..<10), try group(10..<110), try group(110..<115)]
        #expect(groups.map { $0.prepared != nil } == [false, false, true, false])
        var plan = BatchCommitter.Plan()
        plan.visible = groups
        let result = try await f.store.databases[.prod].committer.commit(plan, nowMs: 0)
        #expect(result.visible.map(\.stored) == [5, 5, 100, 5])
        #expect(result.visible[2].ids == Array(11...110))
        let stored = try await Self.batches(f)
        #expect(stored.map(\.firstSeq) == [1, 11, 111])
        #expect(stored.map(\.count) == [10, 100, 5])
        let page = try await f.store.query(RecordQuery(kind: .event, limit: 1000, order: .asc))
        #expect(page.records.map(\.keys.time) == (0..<115).map { 1_000 + Int64($0) })
        await f.close()
    }

    @Test func bloomBuilderSetsTheBitsOfEveryDistinctTerm() {
        let keys = (0..<300).map {
            RecordKeys(
                time: Int64($0), appId: "com.app\($0 % 3)", deviceId: "dev\($0 % 40)", identity: "", name: "AppLaunch", statusCode: $0 % 5)
        }
        var terms = Set<BloomTerm>()
        for k in keys { terms.formUnion(BloomTerm.terms(of: k)) }
        var expected = BloomFilter(expected: terms.count)
        for t in terms { expected.insert(t) }
        var builder = BloomBuilder()
        for k in keys { builder.add(k) }
        let built = builder.filter()
        #expect(built.bits == expected.bits)
        #expect(terms.allSatisfy { built.mightContain($0) })
    }

    @Test func mergedRollupDeltasEqualOneDeltaOfEveryEvent() {
        let keys = (0..<200).map {
            RecordKeys(
                time: Int64($0) * 60_000, appId: "com.app\($0 % 2)", deviceId: "d", identity: "", name: "EnrollmentCall",
                detail: "op\($0 % 3)", statusCode: 100 + $0 % 4, durationMs: Double($0))
        }
        var whole = EventRollupDelta()
        var first = EventRollupDelta()
        var second = EventRollupDelta()
        for (i, k) in keys.enumerated() {
            whole.add(k, receivedAt: Int64(i))
            if i < 120 { first.add(k, receivedAt: Int64(i)) } else { second.add(k, receivedAt: Int64(i)) }
        }
        first.merge(second)
        #expect(first.events == whole.events)
        for (a, b) in [(first.hours, whole.hours), (first.minutes, whole.minutes)] {
            #expect(a.counts.mapValues(\.count) == b.counts.mapValues(\.count))
            #expect(a.counts.mapValues(\.lastReceivedAt) == b.counts.mapValues(\.lastReceivedAt))
            #expect(a.latencies.mapValues(\.durations) == b.latencies.mapValues(\.durations))
        }
        #expect(whole.minutes.counts.count > whole.hours.counts.count, "both grains are gathered")
    }
}
