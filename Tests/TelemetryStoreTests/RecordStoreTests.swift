import Foundation
import StoreCore
import TelemetryModel
import Testing

@testable import TelemetryStore

@Suite struct RecordStoreTests {
    @Test func appendThenQueryWithFilters() async throws {
        let f = try StoreFixture()
        var records: [DecodedRecord] = []
        for i in 0..<300 {
            records.append(
                StoreFixture.event(
                    app: i % 3 == 0 ? "com.a" : "com.b", device: "dev\(i % 10)", identity: i % 7 == 0 ? "Jane@Contoso.com" : "",
                    time: 1_000 + Int64(i), statusCode: i % 5 == 0 ? 200 : nil))
        }
        let outcome = try await f.store.append(records, kind: .event, env: .prod, receivedAt: 5, incident: nil)
        #expect(outcome.stored == 300)
        // Each app gets a batch of its own (AppBatchLayout), and ids follow the batches: com.a,
        // seen first, takes 1...100 and com.b 101...300, each in its arrival order.
        #expect(outcome.ids.enumerated().filter { $0.offset % 3 == 0 }.map(\.element) == Array(1...100))
        #expect(outcome.ids.enumerated().filter { $0.offset % 3 != 0 }.map(\.element) == Array(101...300))

        let byApp = try await f.store.query(RecordQuery(kind: .event, app: "com.a", limit: 1000))
        #expect(byApp.records.count == 100)
        #expect(byApp.records.allSatisfy { $0.keys.appId == "com.a" })
        let byIdentity = try await f.store.query(RecordQuery(kind: .event, identity: "JANE@contoso.COM", limit: 1000))
        #expect(byIdentity.records.count == 43)
        let window = try await f.store.query(RecordQuery(kind: .event, since: 1_100, until: 1_109, limit: 1000))
        #expect(window.records.map(\.keys.time).sorted() == Array(1_100...1_109))
        let status = try await f.store.query(RecordQuery(kind: .event, device: "dev0", statusCode: 200, limit: 1000))
        #expect(status.records.count == 30)
        let text = try await f.store.query(RecordQuery(kind: .event, contains: "DEV9\"", limit: 1000))
        #expect(text.records.count == 30)
        let logs = try await f.store.query(RecordQuery(kind: .log, limit: 10))
        #expect(logs.records.isEmpty)
        await f.close()
    }

    @Test func paginationCrossesBatchBoundariesInBothOrders() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(maxBatchRecords: 7))
        for round in 0..<5 {
            let batch = (0..<20).map { StoreFixture.event(device: $0 % 2 == 0 ? "even" : "odd", time: Int64(round * 20 + $0)) }
            _ = try await f.store.append(batch, kind: .event, env: .prod, receivedAt: 0, incident: nil)
        }
        for order in [RecordQuery.Order.asc, .desc] {
            var q = RecordQuery(kind: .event, device: "even", limit: 6, order: order)
            var seen: [Int64] = []
            var pages = 0
            repeat {
                let page = try await f.store.query(q)
                seen += page.records.map(\.id)
                q.after = page.nextAfter
                pages += 1
            } while q.after != nil
            #expect(seen.count == 50)
            #expect(Set(seen).count == 50)
            #expect(seen == (order == .asc ? seen.sorted() : seen.sorted(by: >)))
            #expect(pages == 9)
        }
        await f.close()
    }

    @Test func retriedEventIdsAreNotStoredTwice() async throws {
        let f = try StoreFixture()
        let batch = (0..<10).map { StoreFixture.event(time: Int64($0), eventId: "e\($0)") }
        let first = try await f.store.append(batch, kind: .event, env: .prod, receivedAt: 0, incident: nil)
        let again = try await f.store.append(
            batch + [StoreFixture.event(time: 99, eventId: "new")], kind: .event, env: .prod, receivedAt: 0, incident: nil)
        #expect(first.stored == 10)
        #expect(again.stored == 1)
        #expect(again.duplicates == 10)
        #expect(again.duplicateIndices == Array(0..<10))
        // The same eventId from another app is a different event.
        let other = try await f.store.append(
            [StoreFixture.event(app: "com.other", time: 0, eventId: "e0")], kind: .event, env: .prod, receivedAt: 0, incident: nil)
        #expect(other.stored == 1)
        let all = try await f.store.query(RecordQuery(kind: .event, limit: 100))
        #expect(all.records.count == 12)
        await f.close()
    }

    @Test func concurrentAppendsAreGroupedAndAllDurable() async throws {
        let f = try StoreFixture()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for t in 0..<50 {
                group.addTask {
                    let batch = (0..<20).map { StoreFixture.event(device: "t\(t)", time: Int64($0)) }
                    return try await f.store.append(batch, kind: .event, env: t % 2 == 0 ? .prod : .ppe, receivedAt: 0, incident: nil)
                        .stored
                }
            }
            var total = 0
            for try await n in group { total += n }
            #expect(total == 1000)
        }
        let prod = try await f.store.query(RecordQuery(kind: .event, env: .prod, limit: 10_000))
        let ppe = try await f.store.query(RecordQuery(kind: .event, env: .ppe, limit: 10_000))
        #expect(prod.records.count == 500)
        #expect(ppe.records.count == 500)
        #expect(Set(prod.records.map(\.keys.deviceId)).allSatisfy { Int($0.dropFirst())! % 2 == 0 })
        // PPE and prod never share a file.
        #expect(FileManager.default.fileExists(atPath: f.directory.appendingPathComponent("ppe/records.sqlite").path))
        #expect(FileManager.default.fileExists(atPath: f.directory.appendingPathComponent("prod/records.sqlite").path))
        await f.close()
    }

    @Test func keysBlockRoundTrips() throws {
        let keys = [
            RecordKeys(
                time: -5, appId: "a", deviceId: "d", sessionId: "s", identity: "u", name: "EnrollmentCall", detail: "enroll",
                statusCode: 203, durationMs: 12.5, succeeded: false, level: nil, incident: ""),
            RecordKeys(time: 1 << 40, appId: "é", level: .warning, incident: "MAM-2345-6789"),
        ]
        #expect(try KeysBlock.decode(KeysBlock.encode(keys)) == keys)
    }

    @Test func bloomFilterHasNoFalseNegatives() {
        var bloom = BloomFilter(expected: 1000)
        for i in 0..<1000 { bloom.insert(.device("device-\(i)")) }
        for i in 0..<1000 { #expect(bloom.mightContain(.device("device-\(i)"))) }
        let falsePositives = (0..<10_000).filter { bloom.mightContain(.device("other-\($0)")) }.count
        #expect(falsePositives < 300)
    }
}
