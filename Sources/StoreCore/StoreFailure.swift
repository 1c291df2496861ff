/// An error that can say what went wrong in words a client may read: no statement text, no
/// bound values, no file paths, no answer of a backend quoted back.
public protocol ClientDescribable: Error {
    var clientDescription: String { get }
}

/// What a client is told when the store fails. A database error's own description quotes
/// the statement it failed on (GRDB's `DatabaseError` prints "… - while executing `INSERT
/// INTO …`"), which names the schema and may hold record text; that belongs in the daemon's
/// log, never in an answer. Every error that reaches a client goes through here; a backend
/// makes its own errors `ClientDescribable` (the SQLite engine does so for GRDB's
/// `DatabaseError`), so this file names no backend.
public enum StoreFailure {
    public static func clientDescription(of error: any Error) -> String {
        switch error {
        case let e as any ClientDescribable:
            return e.clientDescription
        case is CancellationError:
            return "the request was cancelled"
        default:
            return "an internal error (the daemon's log has the details)"
        }
    }
}

extension StoreError: ClientDescribable {
    /// The store's own failures name no statement; their description is the client's.
    public var clientDescription: String { description }
}
