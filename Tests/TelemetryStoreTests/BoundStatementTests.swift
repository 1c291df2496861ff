import Foundation
import GRDB
import TestSupport
import Testing

@testable import TelemetryStore

/// `BoundStatement` replaces GRDB's argument binding on the commit's per-record statements,
/// so it must store exactly what GRDB stores. GRDB is the oracle: generated rows (texts with
/// NULs, non-ASCII and empty, integers at their limits, blobs of every length including
/// none) go into one table through GRDB and into another through `BoundStatement`, and the
/// two tables must read back equal, with the same changed-row counts and the same errors.
@Suite struct BoundStatementTests {
    static let texts = ["", "a", "é", "e\u{301}", "before\u{0}after", "\u{0}", "😀 ok", String(repeating: "x", count: 3000)]

    static func text(_ random: inout SeededRandom) -> String {
        (0..<random.below(3)).map { _ in random.pick(texts) }.joined()
    }

    static func integer(_ random: inout SeededRandom) -> Int64 {
        random.pick([0, 1, -1, .max, .min, Int64(bitPattern: random.next())])
    }

    static func blob(_ random: inout SeededRandom) -> Data {
        Data((0..<random.pick([0, 1, 16, 300])).map { _ in UInt8(random.below(256)) })
    }

    @Test func storesWhatGRDBStores() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            for table in ["viaGRDB", "viaBound"] {
                try db.execute(sql: "CREATE TABLE \(table)(n INTEGER, t TEXT, b BLOB, f INTEGER, u INTEGER PRIMARY KEY)")
            }
            var random = SeededRandom(seed: 0xB0B0)
            let bound = try BoundStatement(db, sql: "INSERT OR IGNORE INTO viaBound(n, t, b, f, u) VALUES (?, ?, ?, ?, ?)")
            for _ in 0..<3_000 {
                let (n, t, b, f, u) = (
                    Self.integer(&random), Self.text(&random), Self.blob(&random), random.below(2) == 0, random.below(500)
                )
                try db.execute(
                    sql: "INSERT OR IGNORE INTO viaGRDB(n, t, b, f, u) VALUES (?, ?, ?, ?, ?)", arguments: [n, t, b, f, u])
                let grdbChanges = db.changesCount
                let changes = try bound.run {
                    $0.add(n)
                    $0.add(t)
                    $0.add(b)
                    $0.add(f)
                    $0.add(u)
                }
                #expect(changes == grdbChanges, "a repeated key changes no row in both")
            }
            let columns = "SELECT n, t, typeof(t), b, typeof(b), f, u FROM"
            let expected = try Row.fetchAll(db, sql: "\(columns) viaGRDB ORDER BY u")
            let actual = try Row.fetchAll(db, sql: "\(columns) viaBound ORDER BY u")
            #expect(expected.count > 400)
            #expect(actual == expected)
        }
    }

    /// A failed step throws GRDB's error with SQLite's code and leaves the statement usable; a
    /// wrong number of arguments is refused before SQLite runs anything.
    @Test func failuresThrowAndTheStatementRunsAgain() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT NOT NULL)")
            let insert = try BoundStatement(db, sql: "INSERT INTO t(k, v) VALUES (?, ?)")
            #expect(
                try insert.run {
                    $0.add(1)
                    $0.add("one")
                } == 1)
            let duplicate = #expect(throws: DatabaseError.self) {
                try insert.run {
                    $0.add(1)
                    $0.add("again")
                }
            }
            #expect(duplicate?.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY)
            let short = #expect(throws: DatabaseError.self) { try insert.run { $0.add(2) } }
            #expect(short?.resultCode == .SQLITE_RANGE)
            #expect(
                try insert.run {
                    $0.add(2)
                    $0.add("two")
                } == 1)
            #expect(try String.fetchAll(db, sql: "SELECT v FROM t ORDER BY k") == ["one", "two"])
        }
    }
}
