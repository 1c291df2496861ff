import Foundation
import GRDB
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// The device sightings commits buffer and write every few seconds: whatever happens between
/// (rolled-back commits, compaction, a crash that loses the buffer), a lookup finds exactly
/// the devices of the stored records, and commits between two writes leave the index alone.
@Suite struct DeviceIndexBufferTests {
    static let configuration = StoreConfiguration(maxBatchRecords: 8)

    static func open(_ directory: URL) throws -> EnvironmentDatabase {
        try EnvironmentDatabase(env: .prod, directory: directory, configuration: configuration)
    }

    static func pairs(_ db: EnvironmentDatabase) async throws -> Set<String> {
        try await db.pool.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT device, app FROM device_index")
            return Set(rows.map { "\($0["device"] as String)|\($0["app"] as String)" })
        }
    }

    static func difference(_ found: Set<String>, _ stored: Set<String>) -> String {
        "missing \(stored.subtracting(found).sorted()), extra \(found.subtracting(stored).sorted())"
    }

    static func watermark(_ db: EnvironmentDatabase) async throws -> (through: Int64, newest: Int64) {
        try await db.pool.read { db in (try DeviceIndexBuffer.watermark(db), try BatchCommitter.nextSeq(db) - 1) }
    }

    /// A generated history: commits with random devices in random spellings, clocks that
    /// advance by up to 3 s, commits rolled back, compaction, lookups, and crashes that drop
    /// the buffer. After each step, the index after a lookup's flush holds exactly the pairs
    /// of the committed records (the oracle), and a commit before the write is due writes
    /// no index row.
    @Test(arguments: 0..<4) func theIndexAfterAFlushIsTheStoredRecordsWhateverHappened(seed: UInt64) async throws {
        var random = SeededRandom(seed: 0xB0FF + seed)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("device-buffer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var db = try Self.open(directory)
        let devices = (0..<60).map { _ in DeviceIndexTests.guid(&random) } + ["Phone-1", "phone-1", "PHONE-1"]
        let apps = ["com.a", "com.b", "com.c"]
        var stored = Set<String>()
        var nowMs: Int64 = 1_800_000_000_000
        let worker = BackgroundWorker(name: "compactor", idleExit: .milliseconds(200))
        for step in 0..<80 {
            nowMs += Int64(random.below(3_000))
            let records = (0..<(1 + random.below(20))).map { i in
                StoreFixture.event(app: random.pick(apps), device: random.pick(devices + [""]), time: nowMs + Int64(i))
            }
            let kind: RecordKind = random.below(2) == 0 ? .event : .log
            let plan = BatchCommitter.Plan(visible: [.init(records: records, kind: kind, receivedAt: nowMs, incident: nil)])
            let before = try await Self.pairs(db)
            let pending = db.deviceIndex.buffer.pendingPairs
            switch random.below(10) {
            case 0:
                // Rolled back: nothing of it may reach the index or the buffer.
                await #expect(throws: CancellationError.self) {
                    _ = try await db.committer.commit(plan, nowMs: nowMs, beforeCommit: { throw CancellationError() })
                }
                #expect(db.deviceIndex.buffer.pendingPairs == pending, "step \(step)")
            default:
                _ = try await db.committer.commit(plan, nowMs: nowMs)
                for r in records where !r.keys.deviceId.isEmpty { stored.insert("\(r.keys.deviceId)|\(r.keys.appId)") }
                if db.deviceIndex.buffer.pendingPairs > 0 {
                    #expect(try await Self.pairs(db) == before, "step \(step): a commit wrote the index before it was due")
                }
            }
            switch random.below(8) {
            case 0:
                // A crash: the buffer is lost with the process; the next open reads it back.
                try db.pool.close()
                db = try Self.open(directory)
                let mark = try await Self.watermark(db)
                #expect(mark.through == mark.newest)
                let found = try await Self.pairs(db)
                #expect(found == stored, "step \(step): after a crash: \(Self.difference(found, stored))")
            case 1:
                for kind in RecordKind.allCases {
                    let rows = try await db.compaction.candidates(kind: kind, from: 0, receivedBefore: .max)
                    if rows.count > 1 { _ = try await db.compaction.compact(rows, kind: kind, worker: worker) }
                }
            case 2:
                _ = try await db.deviceIndex.find(DeviceLookup(text: "phone-1", limit: 5))
                let found = try await Self.pairs(db)
                #expect(found == stored, "step \(step): after a lookup: \(Self.difference(found, stored))")
                let mark = try await Self.watermark(db)
                #expect(mark.through == mark.newest)
            default: break
            }
        }
        try await db.deviceIndex.buffer.flush(db.pool)
        #expect(try await Self.pairs(db) == stored)
        try db.pool.close()
    }

    /// The buffer is written by the first commit five seconds after the last write, or
    /// sooner when it holds many pairs, and the cache then keeps those pairs out of it for
    /// the rest of the hour.
    @Test func theBufferIsWrittenWhenDueAndItsPairsAreNotBufferedAgainThisHour() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("device-buffer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try Self.open(directory)
        let t0: Int64 = 1_800_000_000_000 - 1_800_000_000_000 % DeviceIndexCache.hour
        func commit(_ devices: [String], at nowMs: Int64) async throws {
            let records = devices.map { StoreFixture.event(device: $0, time: nowMs) }
            _ = try await db.committer.commit(
                .init(visible: [.init(records: records, kind: .event, receivedAt: nowMs, incident: nil)]), nowMs: nowMs)
        }
        try await commit(["a", "b"], at: t0)
        try await commit(["c"], at: t0 + 4_999)
        #expect(db.deviceIndex.buffer.pendingPairs == 3)
        #expect(try await Self.pairs(db).isEmpty)
        try await commit(["d"], at: t0 + 5_000)
        #expect(db.deviceIndex.buffer.pendingPairs == 0)
        #expect(try await Self.pairs(db) == ["a|com.app", "b|com.app", "c|com.app", "d|com.app"])
        try await commit(["a", "d"], at: t0 + 6_000)
        #expect(db.deviceIndex.buffer.pendingPairs == 0, "pairs written this hour were buffered again")
        // Due (the last write is more than 5 s ago): written at once, and the interval starts.
        try await commit(["x"], at: t0 + DeviceIndexCache.hour + 1)
        #expect(db.deviceIndex.buffer.pendingPairs == 0)
        try await commit(["a"], at: t0 + DeviceIndexCache.hour + 2)
        #expect(db.deviceIndex.buffer.pendingPairs == 1, "a new hour's sighting was not buffered")

        let many = (0..<DeviceIndexBuffer.flushPairs).map { "m\($0)" }
        try await commit(many, at: t0 + DeviceIndexCache.hour + 3)
        #expect(db.deviceIndex.buffer.pendingPairs == 0)
        #expect(try await Self.pairs(db).count == 5 + many.count)
        try db.pool.close()
    }
}
