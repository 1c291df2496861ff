import Foundation
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// Segments grouped by app give back every record in id order, a query for one app reads
/// only the groups that can hold it, and damaged blobs are refused rather than misread.
@Suite struct GroupedSegmentTests {
    /// 1,000 records over five apps: three large (own groups), two small (the mixed group),
    /// interleaved the way a fleet's requests are, with gaps in the ids.
    static func records() -> [Segment.Record] {
        var random = SeededRandom(seed: 11)
        var out: [Segment.Record] = []
        var id: Int64 = 1_000
        for i in 0..<1_000 {
            let pick = Int(random.next() % 100)
            let app =
                pick < 40 ? "com.big.a" : pick < 70 ? "com.big.b" : pick < 94 ? "com.big.c" : pick < 97 ? "com.small.d" : "com.small.e"
            let device = CompactionTests.guid(&random)
            let json = #"{"name":"AppLaunch","appId":"\#(app)","deviceId":"\#(device)","n":\#(i)}"#
            let keys = RecordKeys(
                time: 1_700_000_000_000 + Int64(i), appId: app, deviceId: device, name: "AppLaunch", detail: i % 2 == 0 ? "MDM" : "MAM-WE")
            out.append(Segment.Record(id: id, receivedAt: 9_000 + Int64(i / 100), keys: keys, json: Array(json.utf8)[...]))
            id += Int64(1 + random.next() % 3)
        }
        return out
    }

    @Test func everyRecordComesBackInIdOrderWithItsBytes() throws {
        let records = Self.records()
        let encoded = try GroupedSegment.encode(records)
        let groups = try GroupedSegment.layout(encoded.keys).groups
        #expect(groups.compactMap(\.app).sorted() == ["com.big.a", "com.big.b", "com.big.c"])
        #expect(groups.filter { $0.app == nil }.count == 1, "the two small apps share the mixed group")
        #expect(groups.reduce(0) { $0 + $1.count } == records.count)
        let ndjson = records.map { Array($0.json) }.joined(separator: [0x0A]).map { $0 }
        #expect(encoded.rawBytes == ndjson.count)

        let block = try StoredBlock(keysBlob: encoded.keys, firstSeq: records[0].id, receivedAt: 0)
        #expect(block.isSegment)
        #expect(block.keys == records.map(\.keys))
        #expect(records.indices.map { block.id($0) } == records.map(\.id))
        #expect(records.indices.map { block.receivedAt($0) } == records.map(\.receivedAt))
        let lines = try block.lines(Data(encoded.payload))
        #expect(records.indices.map { lines.line($0) } == records.map { Array($0.json) })
        #expect(
            try StoredBlock.idSpan(keysBlob: encoded.keys, firstSeq: records[0].id, count: Int64(records.count))
                == records[0].id...records[records.count - 1].id)
    }

    /// A device's GUID used by several apps is stored once for the row, and each group still
    /// reads back its own records' text.
    @Test func guidsSharedByGroupsAreStoredOnce() throws {
        var random = SeededRandom(seed: 3)
        let devices = (0..<40).map { _ in CompactionTests.guid(&random) }
        var records: [Segment.Record] = []
        for i in 0..<900 {
            let app = ["com.a", "com.b", "com.c"][i % 3]
            let session = CompactionTests.guid(&random)
            let json = #"{"appId":"\#(app)","deviceId":"\#(devices[i % 40])","sessionId":"\#(session)"}"#
            records.append(
                Segment.Record(
                    id: Int64(i + 1), receivedAt: 0,
                    keys: RecordKeys(time: Int64(i), appId: app, deviceId: devices[i % 40], sessionId: session),
                    json: Array(json.utf8)[...]))
        }
        let encoded = try GroupedSegment.encode(records)
        let layout = try GroupedSegment.layout(encoded.keys)
        #expect(layout.groups.count == 3)
        #expect(layout.guidCount == 40 + 900, "every device once, every session once")
        let block = try StoredBlock(keysBlob: encoded.keys, firstSeq: 1, receivedAt: 0, app: "com.c")
        let lines = try block.lines(Data(encoded.payload))
        let expected = records.filter { $0.keys.appId == "com.c" }
        #expect(block.keys == expected.map(\.keys))
        #expect(expected.indices.map { lines.line($0) } == expected.map { Array($0.json) })
    }

    @Test func aQueryForOneAppDecodesItsGroupAndTheMixedOne() throws {
        let records = Self.records()
        let encoded = try GroupedSegment.encode(records)
        for app in ["com.big.b", "com.small.e"] {
            let block = try StoredBlock(keysBlob: encoded.keys, firstSeq: records[0].id, receivedAt: 0, app: app)
            // A large app reads its own group only; a small one reads the mixed group, whose
            // other app the query's filter then drops.
            let expected = records.filter { app.hasPrefix("com.big") ? $0.keys.appId == app : $0.keys.appId.hasPrefix("com.small") }
            #expect(block.keys == expected.map(\.keys))
            #expect(expected.indices.map { block.id($0) } == expected.map(\.id))
            let lines = try block.lines(Data(encoded.payload))
            #expect(expected.indices.map { lines.line($0) } == expected.map { Array($0.json) })
        }
        let none = try StoredBlock(keysBlob: encoded.keys, firstSeq: records[0].id, receivedAt: 0, app: "com.absent")
        #expect(none.keys.count == records.filter { $0.keys.appId.hasPrefix("com.small") }.count)
    }

    @Test func oneAppMakesOneGroupAndSmallRowsOnlyTheMixedOne() throws {
        let single = Self.records().map { r in
            var r = r
            r.keys.appId = "com.only"
            return r
        }
        #expect(try GroupedSegment.layout(GroupedSegment.encode(single).keys).groups.map(\.app) == ["com.only"])
        let few = Array(Self.records().prefix(50))
        #expect(try GroupedSegment.layout(GroupedSegment.encode(few).keys).groups.map(\.app) == [nil])
    }

    @Test func manyAppsAreCappedAtTheGroupLimit() throws {
        var records: [Segment.Record] = []
        for i in 0..<(GroupedSegment.maxGroups + 4) * GroupedSegment.minGroupRecords {
            let app = "com.app\(i % (GroupedSegment.maxGroups + 4))"
            let json = #"{"appId":"\#(app)","n":\#(i)}"#
            records.append(
                Segment.Record(id: Int64(i + 1), receivedAt: 0, keys: RecordKeys(time: Int64(i), appId: app), json: Array(json.utf8)[...]))
        }
        let encoded = try GroupedSegment.encode(records)
        let groups = try GroupedSegment.layout(encoded.keys).groups
        #expect(groups.count == GroupedSegment.maxGroups)
        #expect(groups.filter { $0.app == nil }.count == 1)
        let block = try StoredBlock(keysBlob: encoded.keys, firstSeq: 1, receivedAt: 0)
        let lines = try block.lines(Data(encoded.payload))
        #expect(records.indices.map { lines.line($0) } == records.map { Array($0.json) })
    }

    @Test func damagedBlobsAreRefused() throws {
        let encoded = try GroupedSegment.encode(Self.records())
        // Keys cut short, a group count past the limit, and a payload cut short or altered.
        #expect(throws: StoreError.self) { try StoredBlock(keysBlob: Array(encoded.keys.dropLast(10)), firstSeq: 0, receivedAt: 0) }
        var tooMany = encoded.keys
        tooMany[3 + 1 + 1] = 0x7F
        #expect(throws: (any Error).self) { try StoredBlock(keysBlob: tooMany, firstSeq: 0, receivedAt: 0) }
        let block = try StoredBlock(keysBlob: encoded.keys, firstSeq: 0, receivedAt: 0)
        #expect(throws: (any Error).self) { try block.lines(Data(encoded.payload.dropLast(5))) }
        var flipped = encoded.payload
        flipped[flipped.count / 2] ^= 0xFF
        #expect(throws: (any Error).self) { try block.lines(Data(flipped)) }
    }

    /// Through the store: pages by app and unfiltered, in both orders, with cursors landing
    /// inside segments, are the same before and after compaction into grouped segments.
    @Test func compactedGroupsPageExactlyAsTheBatchesDid() async throws {
        let now: Int64 = 1_800_000_000_000
        let f = try CompactionTests.Fixture(now: now)
        var random = SeededRandom(seed: 5)
        for n in 0..<20 {
            let batch = (0..<60).map { i in
                let pick = Int(random.next() % 10)
                let app = pick < 5 ? "com.big.a" : pick < 9 ? "com.big.b" : "com.small"
                return StoreFixture.event(app: app, device: "d\(i % 7)", time: now - 90_000 + Int64(n * 60 + i), eventId: "e\(n)-\(i)")
            }
            _ = try await f.store.append(batch, kind: .event, env: .prod, receivedAt: now - 60_000 + Int64(n), incident: nil)
        }
        func pages() async throws -> [[StoredRecord]] {
            var out: [[StoredRecord]] = []
            for app in [nil, "com.big.a", "com.big.b", "com.small"] {
                for order in [RecordQuery.Order.asc, .desc] { out.append(try await f.all(.event, order: order, limit: 37, app: app)) }
            }
            return out
        }
        let before = try await pages()
        let pass = try await f.store.compactor.compactOnce()
        #expect(pass.segments >= 1 && pass.records == 1_200)
        let after = try await pages()
        #expect(after == before)
        #expect(after[0].count == 1_200 && after[2].count > 300 && after[6].count > 0)
        #expect(after[2].allSatisfy { $0.keys.appId == "com.big.a" })
        await f.close()
    }
}
