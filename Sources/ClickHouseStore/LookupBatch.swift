import Synchronization

/// Runs at most one lookup at a time and merges the keys of every caller that arrives while
/// it runs into the next one, so the number of statements in ClickHouse stays one per
/// collector however many requests ingest takes at once.
///
/// Why: a lookup on an `event_ids` of millions of random ids takes ClickHouse long enough
/// that one per request, ten at a time, took its CPU from the inserts under sustained ingest
/// (BENCHMARKS.md, "retry lookups merged"). One merged lookup reads the granules once for
/// every waiting request.
///
/// A caller waits for the lookup that carries its keys (the running one's answer is not
/// reused: it was asked before the caller's records existed). Cancelling a caller (its
/// deadline passed) answers it nil at once; the lookup goes on for the others.
final class LookupBatch<Group: Hashable & Sendable, Key: Hashable & Sendable>: Sendable {
    /// Looks `keys` up for `group`; nil when the answer did not come.
    typealias Run = @Sendable (Group, Set<Key>) async -> Set<Key>?

    private struct Waiter {
        var group: Group
        var keys: Set<Key>
        var continuation: CheckedContinuation<Set<Key>?, Never>
    }

    private struct State {
        var nextID: UInt64 = 0
        /// Callers not yet answered, by id.
        var waiting: [UInt64: Waiter] = [:]
        /// Callers no lookup has taken yet, in arrival order.
        var queued: [UInt64] = []
        var running = false
        /// Callers with an id but no waiter yet, and whether they were cancelled meanwhile
        /// (a caller cancelled after its answer is in none of these and costs nothing).
        var unregistered: [UInt64: Bool] = [:]
    }

    private let state = Mutex(State())
    private let run: Run

    init(run: @escaping Run) {
        self.run = run
    }

    /// The keys among `keys` that the lookup found; nil when it did not answer or the caller
    /// was cancelled first.
    func lookup(_ group: Group, _ keys: Set<Key>) async -> Set<Key>? {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.unregistered[state.nextID] = false
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Set<Key>?, Never>) in
                let start = state.withLock { state -> Bool? in
                    if state.unregistered.removeValue(forKey: id) == true { return nil }
                    state.waiting[id] = Waiter(group: group, keys: keys, continuation: continuation)
                    state.queued.append(id)
                    if state.running { return false }
                    state.running = true
                    return true
                }
                switch start {
                case nil: continuation.resume(returning: nil)
                case true?: Task { await self.drain() }
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                if let waiter = state.waiting.removeValue(forKey: id) { return waiter }
                if state.unregistered[id] != nil { state.unregistered[id] = true }
                return nil
            }
            waiter?.continuation.resume(returning: nil)
        }
    }

    /// Callers waiting for an answer, and callers given an id but not yet waiting (for tests:
    /// both are empty whenever no lookup is asked, whatever was cancelled).
    var pending: (waiting: Int, unregistered: Int) {
        state.withLock { ($0.waiting.count, $0.unregistered.count) }
    }

    /// Looks up what is queued, one group at a time, until nothing is.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Group: (ids: [UInt64], keys: Set<Key>)] in
                var batch: [Group: (ids: [UInt64], keys: Set<Key>)] = [:]
                for id in state.queued {
                    guard let waiter = state.waiting[id] else { continue }
                    batch[waiter.group, default: ([], [])].ids.append(id)
                    batch[waiter.group, default: ([], [])].keys.formUnion(waiter.keys)
                }
                state.queued.removeAll()
                if batch.isEmpty { state.running = false }
                return batch
            }
            if batch.isEmpty { return }
            for (group, part) in batch {
                let found = await run(group, part.keys)
                let answered = state.withLock { state in part.ids.compactMap { state.waiting.removeValue(forKey: $0) } }
                for waiter in answered {
                    waiter.continuation.resume(returning: found.map { $0.intersection(waiter.keys) })
                }
            }
        }
    }
}
