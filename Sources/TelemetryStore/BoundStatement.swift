import Foundation
import GRDB
import GRDBSQLite

/// A write statement the commit runs once per record or per rollup cell, with its arguments
/// bound straight through SQLite's C API.
///
/// GRDB's `execute(arguments:)` first builds a `StatementArguments` (each value boxed as a
/// `DatabaseValueConvertible` existential, cast back at binding) and nests a closure per
/// argument: for the nine-column rollup upsert that was about 26,000 instructions per row
/// against SQLite's own few thousand (`scripts/callgrind.sh commit`). The values bind the
/// way GRDB binds them (texts as C strings, blobs and integers as such), so the rows are
/// the same; no GRDB observer watches these tables (the store registers none), which is
/// what GRDB's own execution path would have notified.
struct BoundStatement {
    private let statement: Statement
    private let db: Database

    init(_ db: Database, sql: String) throws {
        self.db = db
        statement = try db.cachedStatement(sql: sql)
    }

    /// Binds the arguments `bind` adds (in placeholder order), runs the statement to its end
    /// and resets it; returns the rows it changed. A failed step throws the `DatabaseError`
    /// GRDB would throw (same extended result code, so a full disk is still a full disk).
    @discardableResult
    func run(_ bind: (inout Arguments) -> Void) throws -> Int {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var arguments = Arguments(handle: handle)
        bind(&arguments)
        guard arguments.failure == SQLITE_OK, arguments.count == Int(sqlite3_bind_parameter_count(handle)) else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: arguments.failure == SQLITE_OK ? SQLITE_RANGE : arguments.failure),
                message: "bound \(arguments.count) of \(sqlite3_bind_parameter_count(handle)) arguments", sql: statement.sql)
        }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE: return Int(sqlite3_changes(db.sqliteConnection))
            case SQLITE_ROW: continue
            case let code:
                // GRDB turns extended result codes on, so the step's code is the extended one.
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                    sql: statement.sql)
            }
        }
    }

    /// The arguments of one run, bound as they are added.
    struct Arguments {
        fileprivate let handle: OpaquePointer
        fileprivate private(set) var count = 0
        /// The first binding's failure, reported by `run` (a bind fails only on a bug here:
        /// an index out of range or a value over SQLite's length limit).
        fileprivate private(set) var failure = SQLITE_OK

        fileprivate init(handle: OpaquePointer) { self.handle = handle }

        mutating func add(_ value: Int64) { record(sqlite3_bind_int64(handle, next(), value)) }

        mutating func add(_ value: Int) { add(Int64(value)) }

        mutating func add(_ value: Bool) { add(Int64(value ? 1 : 0)) }

        /// A text, as GRDB binds one: up to its first NUL.
        mutating func add(_ value: String) {
            let index = next()
            record(value.withCString { sqlite3_bind_text(handle, index, $0, -1, Self.transient) })
        }

        mutating func add(_ value: Data) {
            let index = next()
            record(value.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, CInt($0.count), Self.transient) })
        }

        private mutating func next() -> CInt {
            count += 1
            return CInt(count)
        }

        private mutating func record(_ code: CInt) {
            if code != SQLITE_OK && failure == SQLITE_OK { failure = code }
        }

        /// SQLite copies the value before the bind returns.
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }
}
