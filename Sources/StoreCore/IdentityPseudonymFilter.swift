import Synchronization

/// Matches records whose identity has one pseudonym (`user-…`). The store never keeps
/// pseudonyms, and a pseudonym cannot be turned back into its identity, so each distinct
/// identity met is pseudonymised once (with the daemon's key, through `pseudonymOf`) and
/// the result remembered for the rest of the query: a window holds few users many times.
public final class IdentityPseudonymFilter: Sendable {
    public let pseudonym: String
    private let pseudonymOf: @Sendable (String) -> String
    private let seen = Mutex<[String: Bool]>([:])
    /// Distinct identities remembered before the memory starts over.
    static let capacity = 10_000

    /// `pseudonym` as the caller gave it (compared lower-cased, as pseudonyms are written).
    public init(pseudonym: String, pseudonymOf: @escaping @Sendable (String) -> String) {
        self.pseudonym = pseudonym.lowercased()
        self.pseudonymOf = pseudonymOf
    }

    /// Whether `identity` (as stored, lower-cased; empty when the record has none) matches.
    public func matches(_ identity: String) -> Bool {
        guard !identity.isEmpty else { return false }
        if let known = seen.withLock({ $0[identity] }) { return known }
        let match = pseudonymOf(identity) == pseudonym
        seen.withLock { s in
            if s.count >= Self.capacity { s.removeAll(keepingCapacity: true) }
            s[identity] = match
        }
        return match
    }
}
