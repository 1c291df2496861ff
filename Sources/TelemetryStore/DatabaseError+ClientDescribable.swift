// The one public import of GRDB: a conformance of GRDB's own error type is public by nature.
// No type or signature of this module names GRDB.
public import GRDB
public import StoreCore

/// SQLite's failures, in words a client may read: the result code only, never the
/// statement GRDB's own description quotes. `StoreFailure` finds this conformance at run
/// time (`as any ClientDescribable`), wherever the error was thrown.
extension DatabaseError: ClientDescribable {
    public var clientDescription: String { Self.sqliteDescription(resultCode) }

    /// SQLite's primary result code, in words, with its number to search for.
    static func sqliteDescription(_ code: ResultCode) -> String {
        let primary = code.primaryResultCode
        let words =
            switch primary {
            case .SQLITE_FULL: "the disk holding the store is full"
            case .SQLITE_IOERR: "the store's disk failed to read or write"
            case .SQLITE_BUSY, .SQLITE_LOCKED: "the store is busy"
            case .SQLITE_READONLY: "the store is read-only"
            case .SQLITE_CORRUPT, .SQLITE_NOTADB: "the store's database file is damaged"
            case .SQLITE_CANTOPEN: "the store's database file cannot be opened"
            case .SQLITE_NOMEM: "the store ran out of memory"
            default: "the store failed"
            }
        return "\(words) (SQLite result code \(primary.rawValue))"
    }
}
