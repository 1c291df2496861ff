import Foundation
import GRDB
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// A query's cost follows its window, not the store: a window no record falls in reads no
/// row and runs the same SQLite steps on a small store and on one four times larger, and a
/// window with matches reads the rows that overlap it. Costs are counted (rows handed to the
/// decoder, SQLite virtual-machine steps), not timed.
@Suite struct QueryCostTests {
    static let now: Int64 = 1_800_000_000_000
    static let minute: Int64 = 60_000

    /// `batches` commits of `perBatch` events each; batch `n` holds the minute
    /// `firstMinute + n` of device time.
    static func fill(_ f: CompactionTests.Fixture, batches: Range<Int>, perBatch: Int = 20) async throws {
        for n in batches {
            let base = now - 24 * 60 * minute + Int64(n) * minute
            let events = (0..<perBatch).map { i in
                StoreFixture.event(app: i % 2 == 0 ? "com.a" : "com.b", time: base + Int64(i) * 1000, eventId: "e\(n)-\(i)")
            }
            _ = try await f.store.append(events, kind: .event, env: .prod, receivedAt: now - 1000, incident: nil)
        }
    }

    /// The read cost of paging through `query` to its end.
    static func cost(of query: RecordQuery, in f: CompactionTests.Fixture) async throws -> (ReadCost, [Int64]) {
        let reads = f.store.databases[.prod].reads
        let before = reads.total
        var ids: [Int64] = []
        var q = query
        repeat {
            let page = try await f.store.query(q)
            ids += page.records.map(\.id)
            q.after = page.nextAfter
        } while q.after != nil
        let after = reads.total
        return (ReadCost(rows: after.rows - before.rows, steps: after.steps - before.steps), ids)
    }

    @Test func aWindowWithNoRecordCostsTheSameAtAnySize() async throws {
        let f = try CompactionTests.Fixture(now: Self.now)
        // Nothing was timed in the last ten minutes (the issue's `since=-10m`), nor a day ago.
        let recent = RecordQuery(kind: .event, app: "com.a", since: Self.now - 10 * Self.minute, limit: 1000)
        let gap = RecordQuery(kind: .event, since: Self.now - 30 * 24 * 60 * Self.minute, until: Self.now - 25 * 60 * Self.minute)
        try await Self.fill(f, batches: 0..<40)
        let (recentSmall, none1) = try await Self.cost(of: recent, in: f)
        let (gapSmall, none2) = try await Self.cost(of: gap, in: f)
        #expect(none1.isEmpty && none2.isEmpty)
        try await Self.fill(f, batches: 40..<160)
        let (recentLarge, _) = try await Self.cost(of: recent, in: f)
        let (gapLarge, _) = try await Self.cost(of: gap, in: f)
        #expect(recentSmall.rows == 0 && recentLarge.rows == 0)
        #expect(
            recentLarge.steps == recentSmall.steps, "no-match window: \(recentSmall.steps) steps at 40 rows, \(recentLarge.steps) at 160")
        #expect(gapLarge.steps == gapSmall.steps, "no-match window: \(gapSmall.steps) steps at 40 rows, \(gapLarge.steps) at 160")
        // Compacted into segments, the same.
        _ = try await f.store.compactor.compactOnce()
        let (recentCompacted, _) = try await Self.cost(of: recent, in: f)
        #expect(recentCompacted.rows == 0 && recentCompacted.steps == recentSmall.steps)
        await f.close()
    }

    @Test func aWindowWithMatchesReadsTheRowsItOverlaps() async throws {
        let f = try CompactionTests.Fixture(now: Self.now)
        try await Self.fill(f, batches: 0..<40)
        // Minutes 10 ..< 13 of the fill: three batches.
        let start = Self.now - 24 * 60 * Self.minute + 10 * Self.minute
        let window = RecordQuery(kind: .event, since: start, until: start + 3 * Self.minute - 1, limit: 7, order: .asc)
        let (small, idsSmall) = try await Self.cost(of: window, in: f)
        #expect(idsSmall.count == 60)
        try await Self.fill(f, batches: 40..<160)
        let (large, idsLarge) = try await Self.cost(of: window, in: f)
        #expect(idsLarge == idsSmall)
        // Nine pages of seven over three rows: each page reads the rows from its cursor on,
        // however many rows the store holds.
        #expect(large == small, "the same window read \(small) at 40 rows and \(large) at 160")
        #expect(small.rows <= 9 * 3)
        await f.close()
    }

    /// Pages of a time window (both orders, any limit, with and without an app filter) hold
    /// exactly the records timed in it, in id order, whether the rows come from the time
    /// index or the scan, before and after compaction: checked on random windows over
    /// records whose device times are scattered, some batches spanning hours.
    @Test func windowedPagesHoldExactlyTheRecordsInTheWindow() async throws {
        var random = SeededRandom(seed: 28)
        let f = try CompactionTests.Fixture(now: Self.now, maxRecords: 50)
        let day = 24 * 60 * Self.minute
        for n in 0..<30 {
            let spread = random.below(4) == 0 ? day : 10 * Self.minute
            let base = Self.now - day + Int64(random.below(Int(day)))
            let events = (0..<(5 + random.below(20))).map { i in
                StoreFixture.event(
                    app: random.pick(["com.a", "com.b", "com.c"]), time: base + Int64(random.below(Int(spread))), eventId: "w\(n)-\(i)")
            }
            _ = try await f.store.append(events, kind: .event, env: .prod, receivedAt: Self.now - 1000, incident: nil)
        }
        let everything = try await f.all(.event, order: .asc, limit: 10_000)
        for compacted in [false, true] {
            if compacted { _ = try await f.store.compactor.compactOnce() }
            for _ in 0..<40 {
                let since = Self.now - day + Int64(random.below(Int(day))) - Self.minute
                let until = since + Int64(random.below(Int(day / 4)))
                let app = random.below(3) == 0 ? "com.b" : nil
                let order: RecordQuery.Order = random.below(2) == 0 ? .asc : .desc
                let limit = 1 + random.below(15)
                var expected = everything.filter { $0.keys.time >= since && $0.keys.time <= until && (app == nil || $0.keys.appId == app) }
                    .map(\.id)
                if order == .desc { expected.reverse() }
                let (_, ids) = try await Self.cost(
                    of: RecordQuery(kind: .event, app: app, since: since, until: until, limit: limit, order: order), in: f)
                #expect(ids == expected, "window \(since)...\(until) app \(app ?? "any") \(order) limit \(limit)")
            }
        }
        await f.close()
    }

    /// The index's answer and the scan's are the same rows in the same order: a window
    /// overlapping more rows than the candidate limit falls back to the scan.
    @Test func indexAndScanVisitTheSameRows() async throws {
        var random = SeededRandom(seed: 2028)
        let f = try CompactionTests.Fixture(now: Self.now)
        try await Self.fill(f, batches: 0..<50, perBatch: 3)
        let pool = try DatabasePool(path: f.directory.appendingPathComponent("prod/records.sqlite").path)
        for _ in 0..<60 {
            let since = Self.now - 25 * 60 * Self.minute + Int64(random.below(Int(60 * Self.minute)))
            let windows = [since...(since + Int64(random.below(Int(40 * Self.minute))))]
            let after: Int64? = random.below(2) == 0 ? nil : Int64(1 + random.below(150))
            let order: RecordQuery.Order = random.below(2) == 0 ? .asc : .desc
            let rows = try await pool.read { db -> [[Int64]] in
                try [BatchTimeIndex.maxCandidates, 0].map { limit in
                    let rows = try BatchRows(
                        columns: "id", kind: 0, windows: windows, after: after, through: nil, order: order, db: db, candidateLimit: limit)
                    var ids: [Int64] = []
                    while let row = try rows.next() { ids.append(row[0]) }
                    return ids
                }
            }
            #expect(rows[0] == rows[1], "window \(windows) after \(after ?? 0) \(order)")
        }
        try pool.close()
        await f.close()
    }
}
