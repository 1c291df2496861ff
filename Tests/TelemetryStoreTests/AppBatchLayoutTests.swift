import Compression
import Foundation
import GRDB
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// Fresh batches are cut by app, and ids follow the batches: the layout is a stable
/// partition, an app with many records gets batches of its own, and every append still
/// answers with the ids, duplicates and records an arrival-order oracle expects.
@Suite struct AppBatchLayoutTests {
    /// Apps drawn with power-law weights: a few apps hold most records, many hold a few.
    static func apps(count: Int, distinct: Int, using g: inout SeededRandom) -> [String] {
        (0..<count).map { _ in
            let u = Double.random(in: 0..<1, using: &g)
            return "com.app\(Int(Double(distinct) * u * u * u))"
        }
    }

    @Test func theLayoutIsAStablePartitionByApp() {
        var g = SeededRandom(seed: 17)
        for round in 0..<400 {
            let minimum = [1, 5, 40, 128][round % 4]
            let apps = Self.apps(count: Int.random(in: 0..<700, using: &g), distinct: Int.random(in: 1...12, using: &g), using: &g)
            let layout = AppBatchLayout(apps: apps, minAppRecords: minimum)
            let context: Comment = "round \(round), \(apps.count) records, minimum \(minimum)"
            #expect(layout.order.sorted() == Array(apps.indices), "a permutation: \(context)")
            #expect(layout.runs.map(\.count).reduce(0, +) == apps.count, context)
            #expect(zip(layout.runs, layout.runs.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, context)
            #expect(layout.runs.allSatisfy { !$0.isEmpty }, context)
            if layout.runs.count == 1 { #expect(layout.order == Array(apps.indices), "one run is arrival order: \(context)") }
            let counts = apps.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            let big = Set(counts.filter { $0.value >= minimum }.keys)
            for run in layout.runs {
                let positions = Array(layout.order[run])
                #expect(positions == positions.sorted(), "arrival order within a run: \(context)")
                let runApps = Set(positions.map { apps[$0] })
                // A run is one whole big app, or the mixed rest (which holds no big app) last;
                // with a single app or none big, the records keep arrival order in one run.
                if runApps.count == 1, let app = runApps.first, big.contains(app) {
                    #expect(positions.count == counts[app], "an app's run holds all its records: \(context)")
                } else if big.count > 1 || (big.count == 1 && counts.count > 1) {
                    #expect(run == layout.runs.last, "the mixed run comes last: \(context)")
                    #expect(runApps.isDisjoint(with: big), context)
                } else {
                    #expect(layout.runs.count == 1 && layout.order == Array(apps.indices), context)
                }
            }
        }
    }

    /// The records of each stored batch, decoded from its keys block, by first id.
    static func batchApps(_ f: StoreFixture) async throws -> [(firstSeq: Int64, apps: [String])] {
        try await f.store.databases[.prod].pool.read { db in
            try Row.fetchAll(db, sql: "SELECT firstSeq, keys FROM batch ORDER BY firstSeq").map { row in
                let keys = try KeysBlock.decode(Inflate.decompress([UInt8](row["keys"] as Data), format: .zlib))
                return (row["firstSeq"], keys.map(\.appId))
            }
        }
    }

    @Test func aRequestOfManyAppsStoresABatchPerBigAppAndOneForTheRest() async throws {
        let f = try StoreFixture()
        // Six apps of 200 records interleaved, and 60 records of a seventh.
        let records = (0..<1_260).map { i in
            StoreFixture.event(app: i < 1_200 ? "com.app\(i % 6)" : "com.small", time: 1_000 + Int64(i), eventId: "e\(i)")
        }
        let outcome = try await f.store.append(records, kind: .event, env: .prod, receivedAt: 5, incident: nil)
        #expect(outcome.stored == 1_260)
        let batches = try await Self.batchApps(f)
        #expect(batches.map { Set($0.apps) } == (0..<6).map { ["com.app\($0)"] } + [["com.small"]])
        #expect(batches.map(\.apps.count) == [200, 200, 200, 200, 200, 200, 60])
        // Ids follow the batches: app 0's records take 1...200 in arrival order, and so on.
        #expect(outcome.ids[0] == 1 && outcome.ids[6] == 2 && outcome.ids[1] == 201 && outcome.ids[1_200] == 1_201)
        for app in 0..<6 {
            let page = try await f.store.query(RecordQuery(kind: .event, app: "com.app\(app)", limit: 1_000, order: .asc))
            #expect(page.records.map(\.keys.time) == (0..<200).map { 1_000 + Int64($0 * 6 + app) })
        }
        await f.close()
    }

    /// One appended request of the generated workload, and what the oracle expects of it.
    struct Request {
        var records: [DecodedRecord]
        var duplicateIndices: [Int]
    }

    @Test(arguments: [3, 29, 411])
    func generatedCommitsAnswerAsAnArrivalOrderOracle(seed: UInt64) async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 300, minPreparedRecords: 64))
        let configuration = f.store.databases[.prod].configuration
        var g = SeededRandom(seed: seed)
        var time: Int64 = 0
        var sent: [String: Set<String>] = [:]  // app → eventIds sent so far
        var kept: [String: Int64] = [:]  // "app/eventId" → time of the copy stored
        var timeOfId: [Int64: Int64] = [:]
        var idsOfApp: [String: [Int64]] = [:]
        for commit in 0..<12 {
            var plan = BatchCommitter.Plan()
            var requests: [Request] = []
            for _ in 0..<Int.random(in: 1...7, using: &g) {
                let count = [Int.random(in: 1...30, using: &g), Int.random(in: 60...900, using: &g)].randomElement(using: &g)!
                let apps = Self.apps(count: count, distinct: Int.random(in: 1...9, using: &g), using: &g)
                var request = Request(records: [], duplicateIndices: [])
                for (index, app) in apps.enumerated() {
                    time += 1
                    // A retry of an id already sent (earlier commit, earlier request, or this
                    // one), or a new id; some records carry none and are never deduplicated.
                    let earlier = sent[app, default: []]
                    let eventId: String? =
                        Int.random(in: 0..<10, using: &g) == 0
                        ? nil
                        : (!earlier.isEmpty && Int.random(in: 0..<4, using: &g) == 0
                            ? earlier.randomElement(using: &g)! : "e\(time)")
                    if let eventId {
                        if kept["\(app)/\(eventId)"] != nil {
                            request.duplicateIndices.append(index)
                        } else {
                            kept["\(app)/\(eventId)"] = time
                        }
                        sent[app, default: []].insert(eventId)
                    }
                    request.records.append(StoreFixture.event(app: app, device: "d\(time % 13)", time: time, eventId: eventId))
                }
                requests.append(request)
                plan.visible.append(
                    try BatchCommitter.Group(records: request.records, kind: .event, receivedAt: Int64(commit)).prepared(configuration))
            }
            let result = try await f.store.databases[.prod].committer.commit(plan, nowMs: 0)
            for (request, outcome) in zip(requests, result.visible) {
                let survivors = request.records.indices.filter { !request.duplicateIndices.contains($0) }
                #expect(outcome.duplicateIndices == request.duplicateIndices, "seed \(seed), commit \(commit)")
                #expect(outcome.stored == survivors.count && outcome.ids.count == survivors.count, "seed \(seed), commit \(commit)")
                for (i, id) in zip(survivors, outcome.ids) {
                    #expect(timeOfId.updateValue(request.records[i].keys.time, forKey: id) == nil, "id \(id) given twice")
                    idsOfApp[request.records[i].keys.appId, default: []].append(id)
                }
            }
        }
        // Every id the appends answered reads back as the record it was given for, and each
        // app's ids rise in arrival order.
        let all = try await f.store.query(RecordQuery(kind: .event, limit: 100_000, order: .asc))
        #expect(all.records.count == timeOfId.count)
        for record in all.records { #expect(timeOfId[record.id] == record.keys.time, "seed \(seed), id \(record.id)") }
        for (app, ids) in idsOfApp {
            #expect(ids == ids.sorted(), "seed \(seed): \(app)'s ids follow its arrival order")
            let page = try await f.store.query(RecordQuery(kind: .event, app: app, limit: 100_000, order: .asc))
            #expect(page.records.map(\.id) == ids, "seed \(seed): a query for \(app)")
        }
        // Batches hold consecutive ids, and the big apps got batches of their own.
        let batches = try await Self.batchApps(f)
        #expect(zip(batches, batches.dropFirst()).allSatisfy { $0.firstSeq + Int64($0.apps.count) == $1.firstSeq })
        #expect(batches.contains { Set($0.apps).count == 1 && $0.apps.count >= AppBatchLayout.minAppRecords })
        await f.close()
    }
}
