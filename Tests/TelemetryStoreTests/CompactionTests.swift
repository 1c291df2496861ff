import Foundation
import GRDB
import Logging
import Metrics
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// Segments round-trip every byte and key, and compaction changes how rows are stored but
/// nothing a reader sees: ids, pages in both orders, receive times, dedupe and retention.
@Suite struct CompactionTests {
    static func guid(_ random: inout SeededRandom) -> String {
        let hex = Array("0123456789abcdef")
        let s = String((0..<32).map { _ in hex[Int(random.next() % 16)] })
        let c = Array(s)
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-\(String(c[12..<16]))-\(String(c[16..<20]))-\(String(c[20..<32]))"
    }

    @Test func aSegmentGivesBackEveryByteIdAndKey() throws {
        var random = SeededRandom(seed: 7)
        let devices = (0..<5).map { _ in Self.guid(&random) }
        var records: [Segment.Record] = []
        var id: Int64 = 40
        for i in 0..<300 {
            let device = devices[i % devices.count]
            let session = Self.guid(&random)
            // GUID-like text that must stay text, an escape byte, upper case, a GUID at the end.
            let odd = [
                "ABCDEF01-2345-6789-abcd-ef0123456789", "\u{01}", "0123456789abcdef0123456789abcdef0123",
                "12345678-1234-1234-1234-12345678901",
            ][i % 4]
            let json = #"{"deviceId":"\#(device)","sessionId":"\#(session)","odd":"\#(odd)","n":\#(i)}\#(session)"#
            var keys = RecordKeys(
                time: 1_700_000_000_000 + Int64(i * 37 % 11) * 1000, appId: "com.app\(i % 3)", deviceId: device, sessionId: session,
                identity: i % 2 == 0 ? "user\(i)@x" : "", name: "EnrollmentCall", detail: "op\(i % 4)",
                statusCode: i % 5 == 0 ? nil : 200 + i % 3, durationMs: i % 3 == 0 ? Double(i) : (i % 3 == 1 ? 1.5 : nil),
                succeeded: i % 4 == 0 ? nil : i % 2 == 0, level: i % 7 == 0 ? .warning : nil)
            keys.incident = i % 50 == 0 ? "inc\(i)" : ""
            records.append(Segment.Record(id: id, receivedAt: 5_000 + Int64(i / 10), keys: keys, json: Array(json.utf8)[...]))
            id += Int64(1 + i % 3)
        }
        let encoded = try Segment.encode(records)
        let (keysBlob, payloadBlob, rawBytes) = (encoded.keys, encoded.payload, encoded.rawBytes)
        let block = try StoredBlock(keysBlob: keysBlob, firstSeq: 40, receivedAt: 0)
        #expect(block.isSegment)
        #expect(block.keys == records.map(\.keys))
        #expect(records.indices.map { block.id($0) } == records.map(\.id))
        #expect(records.indices.map { block.receivedAt($0) } == records.map(\.receivedAt))
        let ndjson = records.map { Array($0.json) }.joined(separator: [0x0A]).map { $0 }
        let lines = try block.lines(Data(payloadBlob))
        #expect(records.indices.map { lines.line($0) }.joined(separator: [0x0A]).map { $0 } == ndjson)
        #expect(rawBytes == ndjson.count)
        #expect(try StoredBlock.idSpan(keysBlob: keysBlob, firstSeq: 40, count: 300) == 40...(id - 1 - Int64(299 % 3)))
    }

    /// A store whose compactor takes rows as soon as they exist, at a pinned `now`.
    final class Fixture: @unchecked Sendable {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("compact-\(UUID().uuidString)")
        let store: SQLiteRecordStore
        let task: Task<Void, Error>

        init(now: Int64, maxRecords: Int = 16384) throws {
            store = try SQLiteRecordStore(
                directory: directory,
                configuration: StoreConfiguration(compaction: CompactionPolicy(maxRecords: maxRecords, minimumAgeSeconds: 0)),
                clock: FixedClock(now), metrics: NOOPMetricsHandler.instance)
            let committer = store.committer
            task = Task { try await committer.run() }
        }

        func close() async {
            await store.committer.close()
            task.cancel()
            try? FileManager.default.removeItem(at: directory)
        }

        func rows() throws -> Int {
            try DatabaseQueue(path: directory.appendingPathComponent("prod/records.sqlite").path).read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM batch") ?? 0
            }
        }

        /// Every record of `kind`, paged `limit` at a time in `order`.
        func all(_ kind: RecordKind, order: RecordQuery.Order, limit: Int = 7, app: String? = nil) async throws -> [StoredRecord] {
            var out: [StoredRecord] = []
            var after: Int64?
            repeat {
                let page = try await store.query(RecordQuery(kind: kind, app: app, limit: limit, after: after, order: order))
                out += page.records
                after = page.nextAfter
            } while after != nil
            return out
        }
    }

    static func log(_ n: Int, device: String, time: Int64) -> DecodedRecord {
        let json =
            #"{"time":"\#(Timestamp.format(milliseconds: time))","level":"info","message":"m\#(n)","appId":"com.app","deviceId":"\#(device)"}"#
        return DecodedRecord(
            json: Array(json.utf8), keys: RecordKeys(time: time, appId: "com.app", deviceId: device, level: .info), flags: .unspecified,
            eventId: nil)
    }

    @Test func compactionKeepsIdsPagesDedupeAndRetention() async throws {
        let now: Int64 = 1_800_000_000_000
        let f = try Fixture(now: now, maxRecords: 40)
        var random = SeededRandom(seed: 3)
        // Many small commits, events and logs interleaved, so each kind's ids have gaps.
        for n in 0..<30 {
            let device = Self.guid(&random)
            let events = (0..<3).map {
                StoreFixture.event(
                    app: n % 2 == 0 ? "com.a" : "com.b", device: device, time: now - 90_000 + Int64(n * 10 + $0), eventId: "e\(n)-\($0)")
            }
            _ = try await f.store.append(events, kind: .event, env: .prod, receivedAt: now - 60_000 + Int64(n), incident: nil)
            _ = try await f.store.append(
                [Self.log(n, device: device, time: now - 90_000 + Int64(n))], kind: .log, env: .prod, receivedAt: now - 60_000 + Int64(n),
                incident: nil)
        }
        let pagesBefore = [
            try await f.all(.event, order: .asc), try await f.all(.event, order: .desc), try await f.all(.log, order: .asc),
            try await f.all(.log, order: .desc), try await f.all(.event, order: .asc, app: "com.b"),
        ]
        let rowsBefore = try f.rows()
        #expect(rowsBefore == 60)

        let pass = try await f.store.compactor.compactOnce()
        #expect(pass.segments > 1, "40-record segments: several per kind")
        #expect(pass.records == 120)
        #expect(try f.rows() == pass.segments)
        #expect(pass.bytesAfter < pass.bytesBefore)
        // Nothing left to do: a second pass writes nothing.
        #expect(try await f.store.compactor.compactOnce().segments == 0)

        let pagesAfter = [
            try await f.all(.event, order: .asc), try await f.all(.event, order: .desc), try await f.all(.log, order: .asc),
            try await f.all(.log, order: .desc), try await f.all(.event, order: .asc, app: "com.b"),
        ]
        #expect(pagesAfter == pagesBefore)
        #expect(pagesAfter[0].count == 90 && pagesAfter[2].count == 30)

        // Retries of compacted events are still recognised.
        let retry = try await f.store.append(
            [StoreFixture.event(app: "com.a", time: now, eventId: "e0-1")], kind: .event, env: .prod, receivedAt: now, incident: nil)
        #expect(retry.stored == 0 && retry.duplicates == 1)

        // Age retention removes segments with their dedup ids (and leaves the other kind's).
        let service = RetentionService(
            store: f.store, policy: RetentionPolicy(), logger: Logger(label: "t"), clock: FixedClock(now + 40 * 86_400_000),
            metrics: NOOPMetricsHandler.instance)
        let removed = try await service.sweep()
        #expect(removed[.prod]?.records ?? 0 >= 90)
        let again = try await f.store.append(
            [StoreFixture.event(app: "com.a", time: now, eventId: "e0-1")], kind: .event, env: .prod, receivedAt: now, incident: nil)
        #expect(again.stored == 1)
        await f.close()
    }
}
