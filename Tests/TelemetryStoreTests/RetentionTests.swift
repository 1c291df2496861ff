import Compression
import Foundation
import GRDB
import Logging
import Metrics
import StoreCore
import TelemetryModel
import Testing

@testable import TelemetryStore

@Suite struct RetentionTests {
    static func log(_ level: LogLevel, _ message: String, identity: String = "", time: Int64) -> DecodedRecord {
        var w = JSONWriter()
        w.beginObject()
        w.field("time", Timestamp.format(milliseconds: time))
        w.field("level", level.name)
        w.field("message", message)
        w.field("appId", "com.app")
        w.field("deviceId", "dev")
        if !identity.isEmpty { w.field("identity", identity) }
        w.endObject()
        return DecodedRecord(
            json: w.bytes, keys: RecordKeys(time: time, appId: "com.app", deviceId: "dev", identity: identity.lowercased(), level: level),
            flags: .unspecified, eventId: nil, message: message)
    }

    @Test func verboseContentExpiresFirstKeepingIdsAndOrder() async throws {
        let f = try StoreFixture()
        let day: Int64 = 86_400_000
        let now: Int64 = 100 * day
        let records = [
            Self.log(.info, "first", time: 1), Self.log(.verbose, "jane@contoso.com signed in", identity: "jane@contoso.com", time: 2),
            Self.log(.error, "third", time: 3), Self.log(.verbose, "token refresh for jane@contoso.com", time: 4),
        ]
        _ = try await f.store.append(records, kind: .log, env: .prod, receivedAt: now - 5 * day, incident: nil)
        _ = try await f.store.append(
            [Self.log(.verbose, "recent verbose", time: 5)], kind: .log, env: .prod, receivedAt: now, incident: nil)
        let service = RetentionService(
            store: f.store, policy: RetentionPolicy(), logger: Logger(label: "t"), clock: FixedClock(now),
            metrics: NOOPMetricsHandler.instance)
        let result = try await service.sweep()
        #expect(result[.prod]?.verboseScrubbed == 2)
        let page = try await f.store.query(RecordQuery(kind: .log, limit: 100, order: .asc))
        #expect(page.records.map(\.id) == [1, 2, 3, 4, 5])
        let texts = page.records.map { String(decoding: $0.json, as: UTF8.self) }
        #expect(texts[0].contains("first") && texts[2].contains("third"))
        #expect(!texts[1].contains("jane") && !texts[3].contains("jane"))
        #expect(texts[1].contains("\"expired\":true"))
        #expect(texts[4].contains("recent verbose"))  // younger than the verbose retention
        // A rewritten row records its new inflated size: readers inflate at it, the compactor plans by it.
        let rows = try f.store.databases[.prod].pool.read { try Row.fetchAll($0, sql: "SELECT rawBytes, payload FROM batch") }
        #expect(rows.count == 2)
        for row in rows {
            let inflated = try Inflate.decompress([UInt8](row["payload"] as Data), format: .zlib)
            #expect(inflated.count == row["rawBytes"] as Int)
        }
        // A second pass finds nothing more to do.
        #expect(try await service.sweep()[.prod]?.verboseScrubbed == 0)
        await f.close()
    }

    @Test func ageAndSizeLimitsDeleteOldestBatchesAndTheirDedupIds() async throws {
        let f = try StoreFixture()
        let day: Int64 = 86_400_000
        let now: Int64 = 100 * day
        _ = try await f.store.append(
            [StoreFixture.event(time: 1, eventId: "old")], kind: .event, env: .prod, receivedAt: now - 40 * day, incident: nil)
        _ = try await f.store.append(
            [StoreFixture.event(time: 2, eventId: "new")], kind: .event, env: .prod, receivedAt: now - day, incident: nil)
        let service = RetentionService(
            store: f.store, policy: RetentionPolicy(), logger: Logger(label: "t"), clock: FixedClock(now),
            metrics: NOOPMetricsHandler.instance)
        let result = try await service.sweep()
        #expect(result[.prod]?.records == 1)
        let left = try await f.store.query(RecordQuery(kind: .event, limit: 10))
        #expect(left.records.map(\.keys.time) == [2])
        // The expired event's dedup id went with it: the same id may be stored again.
        let again = try await f.store.append(
            [StoreFixture.event(time: 1, eventId: "old")], kind: .event, env: .prod, receivedAt: now, incident: nil)
        #expect(again.stored == 1)
        await f.close()
    }
}
