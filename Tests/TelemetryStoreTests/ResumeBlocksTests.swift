import Foundation
import StoreCore
import TelemetryModel
import Testing

@testable import TelemetryStore

/// A page that continues in the row the previous page stopped in takes that row as it was
/// decoded, and gets exactly what decoding it afresh gives; a row changed in between is
/// decoded again, never served from what was kept.
@Suite struct ResumeBlocksTests {
    static func log(_ n: Int, level: LogLevel) -> DecodedRecord {
        let json =
            #"{"time":"2026-11-25T10:00:\#(String(format: "%02d", n % 60)).000Z","level":"\#(level.name)","message":"secret \#(n)","appId":"com.app","deviceId":"d1"}"#
        return DecodedRecord(
            json: Array(json.utf8), keys: RecordKeys(time: 1_795_000_000_000 + Int64(n), appId: "com.app", deviceId: "d1", level: level),
            flags: .unspecified, eventId: nil)
    }

    @Test func pagesFromAKeptRowEqualPagesDecodedAfresh() async throws {
        let f = try StoreFixture()
        _ = try await f.store.append((0..<50).map { Self.log($0, level: .info) }, kind: .log, env: .prod, receivedAt: 1, incident: nil)
        for order in [RecordQuery.Order.asc, .desc] {
            var q = RecordQuery(kind: .log, limit: 7, order: order)
            var paged: [StoredRecord] = []
            repeat {
                let page = try await f.store.query(q)
                paged += page.records
                q.after = page.nextAfter
                #expect(page.nextAfter == nil || !f.store.databases[.prod].resumeBlocks.isEmpty, "the stopped-in row is kept")
            } while q.after != nil
            let whole = try await f.store.query(RecordQuery(kind: .log, limit: 1000, order: order)).records
            #expect(paged == whole)
        }
        await f.close()
    }

    @Test func aRowChangedBetweenPagesIsDecodedAgain() async throws {
        let f = try StoreFixture()
        _ = try await f.store.append((0..<20).map { Self.log($0, level: .verbose) }, kind: .log, env: .prod, receivedAt: 1, incident: nil)
        let first = try await f.store.query(RecordQuery(kind: .log, limit: 5, order: .asc))
        #expect(first.records.allSatisfy { String(decoding: $0.json, as: UTF8.self).contains("secret") })
        // Verbose records past their retention are scrubbed in place: same row id, new bytes.
        let scrubbed = try await f.store.databases[.prod].pool.write { try EnvironmentRetention.scrubVerbose(olderThan: 10, db: $0) }
        #expect(scrubbed == 20)
        let second = try await f.store.query(RecordQuery(kind: .log, limit: 5, after: first.nextAfter, order: .asc))
        #expect(second.records.count == 5)
        #expect(second.records.allSatisfy { !String(decoding: $0.json, as: UTF8.self).contains("secret") })
        await f.close()
    }
}
