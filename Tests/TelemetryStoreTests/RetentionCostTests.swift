import Foundation
import GRDB
import GRDBSQLite
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// What retention's deletion of one batch costs does not depend on how much else the store
/// holds: the statement that deletes a batch's dedup ids runs the same SQLite steps with four
/// times as many ids stored. Counted (virtual-machine steps), not timed.
@Suite struct RetentionCostTests {
    static let now: Int64 = 1_800_000_000_000

    /// The steps of deleting the dedup ids of the first batch (seqs 1...20), rolled back.
    static func stepsToDeleteFirstBatchIds(_ f: CompactionTests.Fixture) throws -> (steps: Int, deleted: Int) {
        let queue = try DatabaseQueue(path: f.directory.appendingPathComponent("prod/records.sqlite").path)
        var out = (steps: 0, deleted: 0)
        try queue.inTransaction { db in
            let statement = try db.makeStatement(sql: EnvironmentRetention.deleteDedupIds)
            try statement.execute(arguments: [1, 20, RecordKind.event.storedCode])
            out = (Int(sqlite3_stmt_status(statement.sqliteStatement, SQLITE_STMTSTATUS_VM_STEP, 0)), db.changesCount)
            return .rollback
        }
        try queue.close()
        return out
    }

    @Test func deletingABatchsDedupIdsCostsTheSameAtAnySize() async throws {
        let f = try CompactionTests.Fixture(now: Self.now)
        try await QueryCostTests.fill(f, batches: 0..<40)
        let small = try Self.stepsToDeleteFirstBatchIds(f)
        try await QueryCostTests.fill(f, batches: 40..<160)
        let large = try Self.stepsToDeleteFirstBatchIds(f)
        #expect(small.deleted == 20 && large.deleted == 20)
        #expect(large.steps == small.steps, "\(small.steps) steps with 800 ids stored, \(large.steps) with 3,200")
        await f.close()
    }
}
