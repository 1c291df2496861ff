import StoreCore
import Synchronization

/// Fans commit notices out to every `follow=true` stream. Each subscriber has a small
/// newest-only buffer: a follower only needs to know "something new arrived since you last
/// looked", so a slow follower can never make the committer wait or grow memory.
final class CommitBroadcaster: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<CommitNotice>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    func subscribe() -> AsyncStream<CommitNotice> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<CommitNotice>.makeStream(bufferingPolicy: .bufferingNewest(4))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    func publish(_ notice: CommitNotice) {
        let all = subscribers.withLock { Array($0.values) }
        for c in all { c.yield(notice) }
    }

    func finishAll() {
        let all = subscribers.withLock { s -> [AsyncStream<CommitNotice>.Continuation] in
            defer { s.removeAll() }
            return Array(s.values)
        }
        for c in all { c.finish() }
    }
}
