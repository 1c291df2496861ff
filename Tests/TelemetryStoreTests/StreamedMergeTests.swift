import Foundation
import GRDB
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// The compactor's merge streams one row at a time into the segment writer: every record
/// comes back as it was committed, and the merge never holds more than one row's inflated
/// payload, however long the run.
@Suite struct StreamedMergeTests {
    /// A fleet's commits: small batches of events and logs interleaved (so each kind's ids
    /// have gaps), over three large apps (groups of their own) and four small ones (the mixed
    /// group), with GUIDs the payload coding shares, escape bytes and GUID-like text.
    struct Generator {
        var random: SeededRandom
        let devices: [String]
        let now: Int64
        var n = 0

        init(seed: UInt64, now: Int64) {
            random = SeededRandom(seed: seed)
            var r = random
            devices = (0..<60).map { _ in CompactionTests.guid(&r) }
            random = r
            self.now = now
        }

        mutating func batch() -> (kind: RecordKind, records: [DecodedRecord]) {
            let kind: RecordKind = random.below(3) == 0 ? .log : .event
            return (kind, (0..<(1 + random.below(40))).map { _ in record(kind) })
        }

        mutating func record(_ kind: RecordKind) -> DecodedRecord {
            n += 1
            let pick = random.below(100)
            let app =
                pick < 35
                ? "com.big.a" : pick < 60 ? "com.big.b" : pick < 85 ? "com.big.c" : "com.small.\(["d", "e", "f", "g"][pick % 4])"
            let device = random.pick(devices)
            let session = CompactionTests.guid(&random)
            let time = now - 90_000 + Int64(random.below(60_000))
            let odd = random.pick(["", "\u{01}", "ABCDEF01-2345-6789-abcd-ef0123456789", "\u{01}\u{01}x", "caf\u{e9}"])
            let stamp = Timestamp.format(milliseconds: time)
            switch kind {
            case .log:
                let level = random.pick([LogLevel.verbose, .info, .warning, .error])
                let json =
                    #"{"time":"\#(stamp)","level":"\#(level)","message":"m\#(n) \#(odd) \#(session)","appId":"\#(app)","deviceId":"\#(device)"}"#
                return DecodedRecord(
                    json: Array(json.utf8), keys: RecordKeys(time: time, appId: app, deviceId: device, detail: "Identity", level: level),
                    flags: .unspecified, eventId: nil)
            default:
                let name = random.pick(["AppLaunch", "EnrollmentCall", "IntuneAction"])
                let status = random.below(4) == 0 ? nil : 200 + random.below(3)
                let json =
                    #"{"time":"\#(stamp)","name":"\#(name)","appId":"\#(app)","deviceId":"\#(device)","sessionId":"\#(session)","odd":"\#(odd)","n":\#(n)}"#
                return DecodedRecord(
                    json: Array(json.utf8),
                    keys: RecordKeys(
                        time: time, appId: app, deviceId: device, sessionId: session, name: name, detail: "op\(n % 5)", statusCode: status,
                        durationMs: random.below(2) == 0 ? Double(random.below(900)) : nil, succeeded: status.map { $0 == 200 }),
                    flags: .unspecified, eventId: nil)
            }
        }
    }

    /// Commits `batches` generated batches, received a millisecond apart.
    static func commit(_ batches: Int, _ generator: inout Generator, into f: CompactionTests.Fixture, at receivedAt: inout Int64)
        async throws
    {
        for _ in 0..<batches {
            let (kind, records) = generator.batch()
            _ = try await f.store.append(records, kind: kind, env: .prod, receivedAt: receivedAt, incident: nil)
            receivedAt += 1
        }
    }

    /// Every record of the store, both kinds, in id order.
    static func everything(_ f: CompactionTests.Fixture) async throws -> [StoredRecord] {
        try await f.all(.event, order: .asc, limit: 500) + f.all(.log, order: .asc, limit: 500)
    }

    /// The stored rows as the reader decodes them.
    static func rows(_ f: CompactionTests.Fixture) throws -> [(keys: [UInt8], payload: Data, block: StoredBlock)] {
        try DatabaseQueue(path: f.directory.appendingPathComponent("prod/records.sqlite").path).read { db in
            try Row.fetchAll(db, sql: "SELECT firstSeq, receivedAt, keys, payload FROM batch ORDER BY id").map {
                let keys = [UInt8]($0["keys"] as Data)
                return (keys, $0["payload"], try StoredBlock(keysBlob: keys, firstSeq: $0["firstSeq"], receivedAt: $0["receivedAt"]))
            }
        }
    }

    @Test(arguments: 0..<PropertyScale.cases(2))
    func theStreamedMergeGivesBackEveryRecordAsTheWholeTextEncoderWould(round: Int) async throws {
        let now: Int64 = 1_800_000_000_000
        let f = try CompactionTests.Fixture(now: now, maxRecords: 3_000)
        var generator = Generator(seed: PropertyScale.seed(41) &+ UInt64(round), now: now)
        var receivedAt = now - 60_000
        try await Self.commit(120, &generator, into: f, at: &receivedAt)
        let committed = try await Self.everything(f)

        let first = try await f.store.compactor.compactOnce()
        #expect(first.segments >= 2, "both kinds")
        // A second wave merges the segments of the first with new batches (segments as input).
        try await Self.commit(160, &generator, into: f, at: &receivedAt)
        let committedAll = try await Self.everything(f)
        let second = try await f.store.compactor.compactOnce()
        #expect(second.segments >= 1)

        let read = try await Self.everything(f)
        #expect(read.count == committedAll.count && read.count > committed.count)
        if let changed = zip(read, committedAll).first(where: { $0 != $1 }) {
            Issue.record("record \(changed.1.id) came back as \(String(decoding: changed.0.json, as: UTF8.self))")
        }
        // Each segment is what the whole-text encoder (one zlib call per stream) makes of the
        // records it holds, byte for byte.
        var segments = 0
        for row in try Self.rows(f) where row.block.isSegment {
            segments += 1
            let lines = try row.block.lines(row.payload)
            var perApp: [String: Int] = [:]
            for k in row.block.keys { perApp[k.appId, default: 0] += 1 }
            var whole = GroupedSegment.Writer(recordsPerApp: perApp, flushBytes: .max)
            for i in row.block.keys.indices {
                try whole.append(id: row.block.id(i), receivedAt: row.block.receivedAt(i), keys: row.block.keys[i], json: lines.slice(i))
            }
            let expected = try whole.finish()
            #expect(row.keys == expected.keys)
            #expect([UInt8](row.payload) == expected.payload)
            #expect(try GroupedSegment.layout(row.keys).groups.count > 1, "own groups and the mixed one")
        }
        #expect(segments >= 2)
        await f.close()
    }

    /// The merge's memory is one row's text: it inflates a row, streams it out and lets it go
    /// before the next, so the most it holds is the largest row's payload, not the run's.
    @Test func aMergeHoldsOneRowsInflatedPayloadAtATime() async throws {
        let now: Int64 = 1_800_000_000_000
        let f = try CompactionTests.Fixture(now: now)
        var generator = Generator(seed: PropertyScale.seed(5), now: now)
        var receivedAt = now - 60_000
        try await Self.commit(150, &generator, into: f, at: &receivedAt)
        let rowsBefore = try Self.rows(f)
        var largest = 0
        var total = 0
        for row in rowsBefore {
            let bytes = try row.block.lines(row.payload).byteCount
            largest = max(largest, bytes)
            total += bytes
        }

        let pass = try await f.store.compactor.compactOnce()
        #expect(pass.segments == 2 && pass.rowsMerged == rowsBefore.count)
        #expect(pass.peakInflatedBytes > 0)
        #expect(
            pass.peakInflatedBytes <= largest,
            "held \(pass.peakInflatedBytes) bytes at once; the largest row is \(largest), the run \(total)")
        await f.close()
    }
}
