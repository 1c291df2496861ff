import Foundation
import GRDB
import StoreCore
import Synchronization
import TelemetryModel
import Testing

@testable import TelemetryStore

/// Retention deletes in steps of bounded size, each its own write transaction, so the group
/// commits waiting for SQLite's one writer go through while a pass runs instead of queueing
/// (with the records they hold) until it ends.
@Suite struct RetentionStepsTests {
    static let day: Int64 = 86_400_000
    static let now: Int64 = 100 * day

    /// Batch rows deleted by each committed transaction, in commit order.
    final class DeletionsPerTransaction: TransactionObserver, @unchecked Sendable {
        private(set) var committed: [Int] = []
        private var current = 0
        /// Called on the writer after the first commit that deleted batches.
        var afterFirstDeletingCommit: (() -> Void)?

        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
            if case .delete(let table) = eventKind { return table == "batch" }
            return false
        }

        /// Triggers on `batch` change other tables in the same statement: only its rows count.
        func databaseDidChange(with event: DatabaseEvent) {
            if event.tableName == "batch" { current += 1 }
        }

        func databaseDidCommit(_ db: Database) {
            guard current > 0 else { return }
            committed.append(current)
            current = 0
            if committed.count == 1 { afterFirstDeletingCommit?() }
        }

        func databaseDidRollback(_ db: Database) { current = 0 }
    }

    /// `count` batches of `perBatch` events each, received `age` before now, oldest first.
    static func fill(_ f: StoreFixture, count: Int, perBatch: Int, age: Int64, tag: String) async throws {
        for n in 0..<count {
            let events = (0..<perBatch).map { i in StoreFixture.event(time: now - age, eventId: "\(tag)\(n)-\(i)") }
            _ = try await f.store.append(events, kind: .event, env: .prod, receivedAt: now - age + Int64(n), incident: nil)
        }
    }

    /// The prod database's retention with a step of `recordsPerStep`, and an observer of what
    /// each transaction deleted.
    static func retention(_ f: StoreFixture, recordsPerStep: Int) async throws -> (EnvironmentRetention, DeletionsPerTransaction) {
        let database = f.store.databases[.prod]
        let observer = DeletionsPerTransaction()
        try await database.pool.writeWithoutTransaction { db in db.add(transactionObserver: observer) }
        return (EnvironmentRetention(pool: database.pool, space: database.space, recordsPerStep: recordsPerStep), observer)
    }

    static func storedEventIds(_ f: StoreFixture) async throws -> [String] {
        try await f.store.query(RecordQuery(kind: .event, limit: 10_000, order: .asc)).records.map { record in
            let text = String(decoding: record.json, as: UTF8.self)
            return String(text.split(separator: "\"eventId\":\"")[1].prefix { $0 != "\"" })
        }
    }

    @Test func ageRetentionCommitsAfterEveryStep() async throws {
        let f = try StoreFixture()
        try await Self.fill(f, count: 30, perBatch: 20, age: 40 * Self.day, tag: "old")
        try await Self.fill(f, count: 2, perBatch: 20, age: Self.day, tag: "new")
        let (retention, observer) = try await Self.retention(f, recordsPerStep: 50)
        let limits = RetentionPolicy.Limits(eventsMaxAge: 30 * 86_400, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: nil)
        let result = try await retention.apply(limits, nowMs: Self.now)
        #expect(result.batches == 30 && result.records == 600)
        // 50 records: the batch that passes the step is deleted whole, so three of 20 a step.
        #expect(observer.committed == Array(repeating: 3, count: 10))
        #expect(try await Self.storedEventIds(f) == (0..<2).flatMap { n in (0..<20).map { "new\(n)-\($0)" } })
        // The dedup ids went with their batches: the old ids are new again, the kept ones are not.
        let again = try await f.store.append(
            [StoreFixture.event(time: Self.now, eventId: "old0-0"), StoreFixture.event(time: Self.now, eventId: "new0-0")],
            kind: .event, env: .prod, receivedAt: Self.now, incident: nil)
        #expect(again.duplicates == 1)
        await f.close()
    }

    @Test func sizeCapDeletesOldestFirstInStepsUntilUnderTheCap() async throws {
        let f = try StoreFixture()
        try await Self.fill(f, count: 60, perBatch: 20, age: Self.day, tag: "b")
        let used = try await f.store.databases[.prod].space.usedBytes()
        let (retention, observer) = try await Self.retention(f, recordsPerStep: 20)
        let limits = RetentionPolicy.Limits(eventsMaxAge: nil, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: used * 3 / 4)
        let result = try await retention.apply(limits, nowMs: Self.now, returnFreeSpace: false)
        #expect(result.batches > 1)
        #expect(observer.committed == Array(repeating: 1, count: result.batches))
        let target = limits.maxBytes! - RetentionPolicy.growthStep(of: limits.maxBytes!)
        #expect(try await f.store.databases[.prod].space.usedBytes() <= target)
        let left = try await Self.storedEventIds(f)
        #expect(left == (result.batches..<60).flatMap { n in (0..<20).map { "b\(n)-\($0)" } })
        await f.close()
    }

    @Test func theDiskGuardsDeletionIsStepped() async throws {
        let f = try StoreFixture()
        try await Self.fill(f, count: 10, perBatch: 20, age: Self.day, tag: "b")
        let (retention, observer) = try await Self.retention(f, recordsPerStep: 40)
        let result = try await retention.deleteOldest(.events, atLeast: 1)
        #expect(result.batches == 1 && observer.committed == [1])
        let more = try await retention.deleteOldest(.events, atLeast: .max)
        #expect(more.batches == 9 && observer.committed == [1, 2, 2, 2, 2, 1])
        #expect(try await Self.storedEventIds(f).isEmpty)
        await f.close()
    }

    /// The property the steps exist for: a write that asks for the writer while a pass runs
    /// gets it before the pass ends. The write is queued from the first step's commit, so
    /// with the pass in one transaction it would find every old batch already gone.
    @Test func aWriteWaitingForTheWriterGoesThroughDuringAPass() async throws {
        let f = try StoreFixture()
        try await Self.fill(f, count: 40, perBatch: 5, age: 40 * Self.day, tag: "old")
        let (retention, observer) = try await Self.retention(f, recordsPerStep: 5)
        let pool = f.store.databases[.prod].pool
        let left = Mutex<Int?>(nil)
        observer.afterFirstDeletingCommit = {
            pool.asyncWriteWithoutTransaction { db in
                left.withLock { $0 = try? Int.fetchOne(db, sql: "SELECT count(*) FROM batch") }
            }
        }
        let limits = RetentionPolicy.Limits(eventsMaxAge: 30 * 86_400, logsMaxAge: nil, verboseLogsMaxAge: nil, maxBytes: nil)
        let result = try await retention.apply(limits, nowMs: Self.now)
        #expect(result.batches == 40)
        let seen = try #require(left.withLock { $0 })
        #expect(seen > 0 && seen < 40, "the waiting write saw \(seen) of 40 old batches left")
        await f.close()
    }
}
