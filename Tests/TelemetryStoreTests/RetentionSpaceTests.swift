import Foundation
import GRDB
import Logging
import Metrics
import StoreCore
import Synchronization
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// Retention must give space back to the filesystem (a disk that passed its high-water mark
/// recovers without an operator) and, when it must delete for size, take verbose logs
/// first, then other logs, then events, oldest first within each.
@Suite struct RetentionSpaceTests {
    /// About `bytes` of base64 text: random, so zlib cannot shrink a batch much and the
    /// sizes below stay predictable.
    static func noise(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let raw = (0..<(bytes * 3 / 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(raw).base64EncodedString()
    }

    static func log(_ level: LogLevel, time: Int64, bytes: Int) -> DecodedRecord {
        var record = RetentionTests.log(level, noise(bytes), time: time)
        record.keys.level = level
        return record
    }

    /// `padding` is reused when given (random text past zlib's 32 KiB window compresses no
    /// better for repeating), else fresh noise of `bytes`.
    static func event(time: Int64, eventId: String, bytes: Int, padding: String? = nil) -> DecodedRecord {
        var w = JSONWriter()
        w.beginObject()
        w.field("name", "AppLaunch")
        w.field("appId", "com.app")
        w.field("time", Timestamp.format(milliseconds: time))
        w.field("eventId", eventId)
        w.field("padding", padding ?? noise(bytes))
        w.endObject()
        return DecodedRecord(
            json: w.bytes, keys: RecordKeys(time: time, appId: "com.app", name: "AppLaunch"), flags: .unspecified,
            eventId: eventId)
    }

    /// One batch of four records of about 50 kB stored each (~200 kB): events when `level`
    /// is nil, else logs of that level, timed `firstTime` onwards.
    static func appendBatch(
        _ f: StoreFixture, _ level: LogLevel?, firstTime: Int64, env: TelemetryEnvironment = .prod, receivedAt: Int64
    ) async throws {
        let records = (0..<4).map { i -> DecodedRecord in
            let time = firstTime + Int64(i)
            return level.map { Self.log($0, time: time, bytes: 66_000) } ?? Self.event(time: time, eventId: "e\(time)", bytes: 66_000)
        }
        _ = try await f.store.append(records, kind: level == nil ? .event : .log, env: env, receivedAt: receivedAt, incident: nil)
    }

    /// Waits for the store's connections rather than failing with SQLITE_BUSY.
    static var patient: Configuration {
        var c = Configuration()
        c.busyMode = .timeout(10)
        return c
    }

    static func autoVacuumMode(_ file: URL) throws -> Int {
        let queue = try DatabaseQueue(path: file.path, configuration: patient)
        return try queue.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") ?? -1 }
    }

    @Test func deletingOldDataShrinksTheFilesOnDisk() async throws {
        let f = try StoreFixture()
        let day: Int64 = 86_400_000
        let now = 100 * day
        for round in 0..<16 {
            let batch = (0..<16).map { Self.event(time: Int64(round * 16 + $0), eventId: "e\(round)-\($0)", bytes: 16_384) }
            _ = try await f.store.append(batch, kind: .event, env: .prod, receivedAt: now - 40 * day, incident: nil)
        }
        _ = try await f.store.append(
            [Self.event(time: 9_999, eventId: "young", bytes: 100)], kind: .event, env: .prod, receivedAt: now, incident: nil)
        let before = f.store.sizes().prod
        #expect(before > 3 << 20)

        let service = RetentionService(
            store: f.store, policy: RetentionPolicy(), logger: Logger(label: "t"), clock: FixedClock(now),
            metrics: NOOPMetricsHandler.instance)
        let result = try await service.sweep()
        #expect(result[.prod]?.records == 256)

        // Database, WAL and shared memory together: the 4 MiB of expired batches are gone
        // from the filesystem, not just from the table.
        let after = f.store.sizes().prod
        #expect(after < 512 << 10, "prod files still take \(after) bytes after deleting \(before)")
        let left = try await f.store.query(RecordQuery(kind: .event, limit: 10))
        #expect(left.records.map(\.keys.time) == [9_999])
        await f.close()
    }

    /// Giving back the space of old data moves the live pages behind it into the holes, and
    /// every moved page passes through the WAL. Moved in one transaction, the WAL grew by all
    /// of it before the file shrank, and the files passed the size cap by as much. Moved in
    /// steps with a checkpoint after each, the WAL stays near one step.
    @Test func givingSpaceBackKeepsTheWALNearOneVacuumStep() async throws {
        let f = try StoreFixture()
        let day: Int64 = 86_400_000
        let now = 100 * day
        let rounds = 32  // about 25 MiB of each: old data at the front of the file, young data behind it
        var sizes: [Int64] = []
        let padding = Self.noise(65_536)
        for (age, label) in [(40 * day, "old"), (0, "young")] {
            for round in 0..<rounds {
                let batch = (0..<16).map {
                    Self.event(time: Int64(round * 16 + $0), eventId: "\(label)\(round)-\($0)", bytes: 0, padding: padding)
                }
                _ = try await f.store.append(batch, kind: .event, env: .prod, receivedAt: now - age, incident: nil)
            }
            sizes.append(f.store.sizes().prod)
        }
        let before = sizes[1]
        // What a single vacuum would push through the WAL: the young data behind the holes.
        let moved = sizes[1] - sizes[0]
        #expect(moved > 20 << 20)

        // What the appends left in the WAL (up to `walCheckpointBytes` before a commit
        // checkpoints it) is not the vacuum's doing: the watch starts from an empty WAL.
        try await f.store.databases.prod.pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        let wal = f.directory.appendingPathComponent("prod/\(EnvironmentDatabase.fileName)-wal").path
        let service = RetentionService(
            store: f.store, policy: RetentionPolicy(), logger: Logger(label: "t"), clock: FixedClock(now),
            metrics: NOOPMetricsHandler.instance)
        var result: [TelemetryEnvironment: RetentionResult] = [:]
        let largestWAL = try await FileSizeWatcher.largestSize(of: wal) { result = try await service.sweep() }
        #expect(result[.prod]?.records == rounds * 16)

        let step = Int64(DatabaseSpace.vacuumStepPages * 4096)
        #expect(largestWAL > 0, "the WAL was never seen")
        #expect(
            largestWAL < step + Int64(DatabaseSpace.walKeptBytes) / 2,
            "the WAL reached \(largestWAL) bytes while \(moved) bytes of live pages moved (one step is \(step))")
        let after = f.store.sizes().prod
        #expect(after < before - moved / 2, "prod files take \(after) bytes after deleting \(moved) of \(before)")
        let left = try await f.store.query(RecordQuery(kind: .event, limit: 1000))
        #expect(left.records.count == rounds * 16, "the young records must all stay")
        await f.close()
    }

    /// Commits checkpoint the WAL once it holds `walCheckpointBytes`: about 40 MiB of
    /// incompressible events leave a WAL near the bound given (a few commits past it at
    /// most), not one as large as the data. Both bounds are tried, so the setting is what
    /// decides; the daemon's bound under a disk guard is the headroom's quarter.
    @Test(arguments: [4 << 20, 32 << 20])
    func theWALIsCheckpointedAtTheConfiguredSize(bound: Int) async throws {
        #expect(StoreConfiguration().boundedByDiskHeadroom(16 << 20).walCheckpointBytes == 4 << 20)
        #expect(StoreConfiguration().boundedByDiskHeadroom(1 << 30).walCheckpointBytes == 64 << 20)
        let f = try StoreFixture(configuration: StoreConfiguration(walCheckpointBytes: bound))
        try await Self.expectWALCheckpointed(f, at: bound)
        await f.close()
    }

    /// A bound moved while the store runs (the daemon's reload of a lower keep-free floor)
    /// holds from the next commit: opened at 32 MiB, moved to 4 MiB.
    @Test func theWALBoundMovesWhileTheStoreRuns() async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(walCheckpointBytes: 32 << 20))
        try await f.store.setWALCheckpointBytes(4 << 20)
        try await Self.expectWALCheckpointed(f, at: 4 << 20)
        await f.close()
    }

    /// Writes about 40 MiB of incompressible events and expects the WAL's largest size near
    /// `bound`: past it by a few commits at most, and not checkpointed well before it.
    static func expectWALCheckpointed(_ f: StoreFixture, at bound: Int) async throws {
        let wal = f.directory.appendingPathComponent("prod/\(EnvironmentDatabase.fileName)-wal").path
        let padding = Self.noise(65_536)
        let largest = try await FileSizeWatcher.largestSize(of: wal) {
            for round in 0..<48 {
                let batch = (0..<16).map {
                    Self.event(time: Int64(round * 16 + $0), eventId: "w\(round)-\($0)", bytes: 0, padding: padding)
                }
                _ = try await f.store.append(batch, kind: .event, env: .prod, receivedAt: 1_000, incident: nil)
            }
        }
        // One append is about 1 MiB of pages; the checkpoint runs after the commit that passes the bound.
        #expect(largest < Int64(bound) + (3 << 20), "the WAL reached \(largest) bytes with a bound of \(bound)")
        #expect(largest > Int64(bound) * 3 / 4, "the WAL was checkpointed at \(largest) bytes, before the bound of \(bound)")
    }

    @Test func sizeCapDeletesVerboseThenLogsThenEventsOldestFirst() async throws {
        let f = try StoreFixture()
        let now: Int64 = 1_000_000
        // Arrival order: old events, info logs, verbose-only logs, new events.
        try await Self.appendBatch(f, nil, firstTime: 0, receivedAt: now - 4)
        try await Self.appendBatch(f, .info, firstTime: 10, receivedAt: now - 3)
        try await Self.appendBatch(f, .verbose, firstTime: 20, receivedAt: now - 2)
        try await Self.appendBatch(f, nil, firstTime: 30, receivedAt: now - 1)

        func sweep(maxBytes: Int64) async throws {
            let limits = RetentionPolicy.Limits(eventsMaxAge: nil, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: maxBytes)
            let service = RetentionService(
                store: f.store, policy: RetentionPolicy(prod: limits, ppe: limits), logger: Logger(label: "t"), clock: FixedClock(now),
                metrics: NOOPMetricsHandler.instance)
            try await service.sweep()
        }
        func left() async throws -> (events: [Int64], logs: [Int64]) {
            let events = try await f.store.query(RecordQuery(kind: .event, limit: 100, order: .asc))
            let logs = try await f.store.query(RecordQuery(kind: .log, limit: 100, order: .asc))
            return (events.records.map(\.keys.time), logs.records.map(\.keys.time))
        }

        // Room for three of the four batches (about 200 KiB each, plus the schema's pages): the
        // verbose-only one goes, though it is newer.
        try await sweep(maxBytes: 800_000)
        var now3 = try await left()
        #expect(now3.logs == [10, 11, 12, 13], "verbose logs were not deleted first: \(now3)")
        #expect(now3.events == [0, 1, 2, 3, 30, 31, 32, 33])
        // Room for two: the info logs go before any event.
        try await sweep(maxBytes: 600_000)
        now3 = try await left()
        #expect(now3.logs.isEmpty && now3.events == [0, 1, 2, 3, 30, 31, 32, 33], "\(now3)")
        // Room for one: the oldest events go, the newest stay.
        try await sweep(maxBytes: 400_000)
        now3 = try await left()
        #expect(now3.events == [30, 31, 32, 33], "\(now3)")
        await f.close()
    }

    @Test func makingRoomTakesVerboseLogsOfEitherEnvironmentBeforeOlderDataOfOtherClasses() async throws {
        let f = try StoreFixture()
        let now: Int64 = 1_000_000
        try await Self.appendBatch(f, nil, firstTime: 0, receivedAt: now - 3)
        try await Self.appendBatch(f, .info, firstTime: 10, receivedAt: now - 2)
        try await Self.appendBatch(f, .verbose, firstTime: 20, env: .ppe, receivedAt: now - 1)
        let service = RetentionService(
            store: f.store, policy: RetentionPolicy(), logger: Logger(label: "t"), clock: FixedClock(now),
            metrics: NOOPMetricsHandler.instance)
        let store = f.store
        @Sendable func onDisk() -> Int64 { store.sizes().dictionary.values.reduce(0, +) }
        try await service.makeRoom { RetentionService.SpaceNeed(missingBytes: 0, freeBytes: 1 << 30) }
        let target = onDisk() - 150_000

        // About one batch is wanted: the newest batch, PPE's verbose logs, is the one to go.
        let result = try await service.makeRoom {
            onDisk() > target ? RetentionService.SpaceNeed(missingBytes: onDisk() - target, freeBytes: 1 << 30) : nil
        }
        #expect(result.batches == 1 && result.records == 4 && result.bytesReturned >= 150_000, "\(result)")
        #expect(try await f.store.query(RecordQuery(kind: .log, env: .ppe, limit: 10)).records.isEmpty)
        #expect(try await f.store.query(RecordQuery(kind: .log, limit: 10)).records.count == 4)
        #expect(try await f.store.query(RecordQuery(kind: .event, limit: 10)).records.count == 4)

        // Asked for everything, it deletes everything it holds, then stops.
        let all = try await service.makeRoom { RetentionService.SpaceNeed(missingBytes: 1 << 40, freeBytes: 1 << 30) }
        #expect(all.records == 8)
        await f.close()
    }

    @Test func aNewStoreUsesIncrementalVacuumAndAnOldOneIsConvertedOnOpen() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("prod/records.sqlite")
        let notices = Mutex<[String]>([])
        let record: StoreMaintenanceNotice = { what, _ in notices.withLock { $0.append(what) } }
        do {
            let store = try SQLiteRecordStore(
                directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance, maintenance: record)
            let committer = store.committer
            let task = Task { try await committer.run() }
            _ = try await store.append(
                [StoreFixture.event(time: 1, eventId: "kept")], kind: .event, env: .prod, receivedAt: 1, incident: nil)
            await committer.close()
            _ = await task.result  // the store, and its connections, go with the committer
        }
        let fresh = try Self.autoVacuumMode(file)
        #expect(fresh == 2, "a new store must be created with auto_vacuum=INCREMENTAL")
        #expect(notices.withLock { $0 }.isEmpty, "an empty database needs no announced rewrite")

        // A database written before incremental vacuum existed: auto_vacuum=NONE.
        let old = try DatabaseQueue(path: file.path, configuration: Self.patient)
        try await old.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA auto_vacuum = NONE")
            try db.execute(sql: "VACUUM")
        }
        try old.close()
        let converted = try Self.autoVacuumMode(file)
        #expect(converted == 0)

        let reopened = try SQLiteRecordStore(
            directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance, maintenance: record)
        let mode = try Self.autoVacuumMode(file)
        #expect(mode == 2, "opening must convert an existing database once")
        #expect(notices.withLock { $0 }.count == 1, "the rewrite was not announced (systemd would not extend the start timeout)")
        let page = try await reopened.query(RecordQuery(kind: .event, limit: 10))
        #expect(page.records.map(\.keys.time) == [1], "the conversion must keep every record")
        await reopened.committer.close()
    }
}
