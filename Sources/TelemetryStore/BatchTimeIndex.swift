import GRDB
import GRDBSQLite
import Synchronization

/// Finds the `batch` rows a time window can match without visiting the others. Each row's
/// kind and device-time bounds are kept in an R*Tree (`batch_span`, filled and maintained by
/// triggers on `batch`, so every writer keeps it: commits, compaction, retention, the spool),
/// which answers "which rows of this kind overlap this window" in time that follows the
/// answer, not the table: a window no stored record falls in costs the same on an empty
/// store and a full one.
///
/// The tree stores coordinates as 32-bit floats rounded outwards (a row's bounds only ever
/// grow, by at most about two minutes at today's epoch milliseconds), so its answer is a
/// superset: readers check the row's exact `minTime`/`maxTime` when they read it.
enum BatchTimeIndex {
    /// A window overlapping more rows than this is read by the in-order scan instead: it
    /// stops at the page's limit, where sorting the candidates would visit all of them.
    static let maxCandidates = 1024

    static let schema = """
        CREATE VIRTUAL TABLE batch_span USING rtree(id, kindLow, kindHigh, timeLow, timeHigh, +firstSeq);
        INSERT INTO batch_span(id, kindLow, kindHigh, timeLow, timeHigh, firstSeq)
          SELECT id, kind, kind, minTime, maxTime, firstSeq FROM batch;
        CREATE TRIGGER batch_span_insert AFTER INSERT ON batch BEGIN
          INSERT INTO batch_span(id, kindLow, kindHigh, timeLow, timeHigh, firstSeq)
            VALUES (new.id, new.kind, new.kind, new.minTime, new.maxTime, new.firstSeq);
        END;
        CREATE TRIGGER batch_span_delete AFTER DELETE ON batch BEGIN
          DELETE FROM batch_span WHERE id = old.id;
        END;
        CREATE TRIGGER batch_span_update AFTER UPDATE OF id, kind, minTime, maxTime, firstSeq ON batch BEGIN
          DELETE FROM batch_span WHERE id = old.id;
          INSERT INTO batch_span(id, kindLow, kindHigh, timeLow, timeHigh, firstSeq)
            VALUES (new.id, new.kind, new.kind, new.minTime, new.maxTime, new.firstSeq);
        END;
        """

    /// A row the window may hold records of.
    struct Candidate: Hashable {
        var id: Int64
        var firstSeq: Int64
    }

    /// The rows of `kind` whose bounds may overlap any of `windows` (inclusive, device time),
    /// in ascending `firstSeq` order; nil when more than `limit` do (read those in order with
    /// a scan).
    static func candidates(
        kind: Int, windows: [ClosedRange<Int64>], limit: Int = maxCandidates, db: Database, cost: inout ReadCost
    ) throws -> [Candidate]? {
        var found = Set<Candidate>()
        let statement = try db.cachedStatement(
            sql: """
                SELECT id, firstSeq FROM batch_span
                WHERE kindLow <= ?1 AND kindHigh >= ?1 AND timeHigh >= ?2 AND timeLow <= ?3 LIMIT ?4
                """)
        for window in windows {
            let rows = try Row.fetchCursor(
                statement, arguments: [kind, window.lowerBound, window.upperBound, limit + 1])
            while let row = try rows.next() {
                found.insert(Candidate(id: row[0], firstSeq: row[1]))
                if found.count > limit { break }
            }
            cost.count(statement)
            if found.count > limit { return nil }
        }
        return found.sorted { $0.firstSeq < $1.firstSeq }
    }
}

/// What reads of the `batch` table cost, counted so tests and benchmarks can compare work
/// independently of the CPU: the rows a read handed to its decoder and the SQLite
/// virtual-machine steps its statements ran (which count the rows SQLite examined and
/// skipped on its own, too).
struct ReadCost: Sendable, Hashable {
    var rows = 0
    var steps = 0

    /// Adds the steps `statement` ran since it was last counted.
    mutating func count(_ statement: Statement) {
        steps += Int(sqlite3_stmt_status(statement.sqliteStatement, SQLITE_STMTSTATUS_VM_STEP, 1))
    }

    static func += (lhs: inout ReadCost, rhs: ReadCost) {
        lhs.rows += rhs.rows
        lhs.steps += rhs.steps
    }
}

/// The read cost of every query and stats read of one environment since the store opened.
final class ReadCounter: Sendable {
    private let counted = Mutex(ReadCost())

    func add(_ cost: ReadCost) { counted.withLock { $0 += cost } }

    var total: ReadCost { counted.withLock { $0 } }
}
