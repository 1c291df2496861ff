/// Failures of the store that callers must tell apart: a full disk is answered with 507,
/// a store that is shutting down with 503, corruption is logged and the batch skipped.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case corruptBlock(String)
    case shuttingDown
    case closed
    /// A caller broke the store's contract (a bug, not bad input).
    case invalidRequest(String)
    /// A request was not stored in all its environments, so none of it was kept.
    case commitIncomplete

    public var description: String {
        switch self {
        case .corruptBlock(let why): "stored block is corrupt: \(why)"
        case .shuttingDown: "the store is shutting down and takes no more writes"
        case .closed: "the store is closed"
        case .invalidRequest(let why): "invalid append: \(why)"
        case .commitIncomplete: "the request could not be committed in every environment it writes to; none of it was kept"
        }
    }
}
