import Foundation
import StoreCore
import Synchronization
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// A read with a budget (`RecordQuery.readBudget`, what bundles set) ends its page early
/// with a cursor; following the cursors must give exactly the records one unbounded read
/// gives, in both orders, with the other kind's records between a kind's batches.
@Suite struct ReadBudgetTests {
    final class Collected: Sendable {
        let ids = Mutex<[Int64]>([])
    }

    /// Every record `query` pages through, following its cursors, and how many pages it took.
    static func follow(_ start: RecordQuery, in store: SQLiteRecordStore) async throws -> (ids: [Int64], pages: Int) {
        var query = start
        var ids: [Int64] = []
        var pages = 0
        while true {
            pages += 1
            let page = Collected()
            let next = try await store.scan(query, announcePageEnd: false) { event in
                if case .record(let r) = event { page.ids.withLock { $0.append(r.id) } }
            }
            ids += page.ids.withLock { $0 }
            guard let next else { return (ids, pages) }
            query.after = next
        }
    }

    @Test func pagesEndedByTheBudgetResumeWithoutLossOrRepeat() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 7))
        var random = SeededRandom(seed: 0x0B0D_6E28)
        var time: Int64 = 1_000
        for _ in 0..<30 {
            let events = (0..<(1 + random.below(40))).map { _ in
                time += 1
                return StoreFixture.event(device: random.below(6) == 0 ? "rare" : "d\(random.below(50))", time: time)
            }
            _ = try await f.store.append(events, kind: .event, env: .prod, receivedAt: 1_000, incident: nil)
            if random.below(2) == 0 {
                // Log records take ids between the events' batches.
                let logs = (0..<(1 + random.below(9))).map { n in CompactionTests.log(n, device: "d1", time: time) }
                _ = try await f.store.append(logs, kind: .log, env: .prod, receivedAt: 1_000, incident: nil)
            }
        }
        for order in [RecordQuery.Order.asc, .desc] {
            for device in ["rare", nil] {
                var query = RecordQuery(kind: .event, env: .prod, device: device, limit: 100_000, order: order)
                let whole = try await f.store.query(query).records.map(\.id)
                #expect(whole.count > 20)
                query.limit = 3
                let unbounded = try await Self.follow(query, in: f.store)
                query.readBudget = .zero
                let budgeted = try await Self.follow(query, in: f.store)
                #expect(unbounded.ids == whole && budgeted.ids == whole, "\(order) \(device ?? "any device")")
                // A budget of zero ends a page at the second row it would read.
                if device != nil { #expect(budgeted.pages > unbounded.pages * 2, "\(budgeted.pages) against \(unbounded.pages) pages") }
            }
        }
        await f.close()
    }
}
