/// Failures of the store that callers must tell apart: a full disk is answered with 507,
/// a store that is shutting down with 503, corruption is logged and the batch skipped.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case corruptBlock(String)
    case shuttingDown
    case closed

    public var description: String {
        switch self {
        case .corruptBlock(let why): "stored block is corrupt: \(why)"
        case .shuttingDown: "the store is shutting down and takes no more writes"
        case .closed: "the store is closed"
        }
    }
}
