import Foundation
import GRDB

/// An error that can say what went wrong in words a client may read: no statement text, no
/// bound values, no file paths, no answer of a backend quoted back.
public protocol ClientDescribable: Error {
    var clientDescription: String { get }
}

/// What a client is told when the store fails. A database error's own description quotes
/// the statement it failed on (GRDB's `DatabaseError` prints "… - while executing `INSERT
/// INTO …`"), which names the schema and may hold record text; that belongs in the daemon's
/// log, never in an answer. Every error that reaches a client goes through here.
public enum StoreFailure {
    public static func clientDescription(of error: any Error) -> String {
        switch error {
        case let e as any ClientDescribable:
            return e.clientDescription
        case let e as DatabaseError:
            return sqliteDescription(e.resultCode)
        case is CancellationError:
            return "the request was cancelled"
        default:
            return "an internal error (the daemon's log has the details)"
        }
    }

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

extension StoreError: ClientDescribable {
    /// The store's own failures name no statement; their description is the client's.
    public var clientDescription: String { description }
}
