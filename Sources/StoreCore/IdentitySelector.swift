/// Whose story a query tells: one identity as stored, or the identities that have one
/// pseudonym (how a caller without `pii` names a user). Both select the same records, so a
/// user's story, widened to the devices they used, is the same whichever way they are named;
/// a store answers a pseudonym with devices and records, never with the identities it matched.
public enum IdentitySelector: Sendable {
    /// Compared lower-cased, as identities are stored.
    case identity(String)
    case pseudonym(IdentityPseudonymFilter)

    /// The identity lower-cased, so `matches` compares stored spellings.
    public var normalized: IdentitySelector {
        if case .identity(let value) = self { return .identity(value.lowercased()) }
        return self
    }

    /// Whether a record's identity (as stored, lower-cased; empty when it has none) is the user's.
    public func matches(_ identity: String) -> Bool {
        switch self {
        case .identity(let value): !identity.isEmpty && identity == value
        case .pseudonym(let filter): filter.matches(identity)
        }
    }
}
