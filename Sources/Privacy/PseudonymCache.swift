import Synchronization

/// Pseudonyms already computed for one caller's request, shared by every record that
/// request presents: a page or bundle shows the same few users thousands of times, and an
/// HMAC per occurrence was most of what presenting a record cost. Bounded, and it lives only
/// as long as the `RecordVisibility` that made it (one request), so nothing outlives the
/// answer it served.
public final class PseudonymCache: Sendable {
    /// Entries kept before the cache starts over: far more users than one page holds.
    static let capacity = 10_000
    private let entries = Mutex<[String: String]>([:])

    public init() {}

    /// The cached pseudonym under `key`, or `make()`'s, remembered.
    func value(for key: String, make: () -> String) -> String {
        if let hit = entries.withLock({ $0[key] }) { return hit }
        let made = make()
        entries.withLock { e in
            if e.count >= Self.capacity { e.removeAll(keepingCapacity: true) }
            e[key] = made
        }
        return made
    }
}
