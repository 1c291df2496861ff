/// Failures of the store that callers must tell apart: a store that is shutting down is
/// answered with 503 (retry later); a corrupt block fails the read that met it.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case corruptBlock(String)
    case shuttingDown
    /// A caller broke the store's contract (a bug, not bad input).
    case invalidRequest(String)
    /// A request was not stored in all its environments, so none of it was kept.
    case commitIncomplete

    public var description: String {
        switch self {
        case .corruptBlock(let why): "stored block is corrupt: \(why)"
        case .shuttingDown: "the store is shutting down and takes no more writes"
        case .invalidRequest(let why): "invalid append: \(why)"
        case .commitIncomplete: "the request could not be committed in every environment it writes to; none of it was kept"
        }
    }
}
