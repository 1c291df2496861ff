import Synchronization

/// Why a background service woke up: its timer, the store committing, or both since it last
/// looked.
struct Wakeup: OptionSet, Sendable, Hashable {
    let rawValue: Int

    static let timer = Wakeup(rawValue: 1)
    static let commit = Wakeup(rawValue: 2)
}

/// Wakes a background service on a timer and on every commit, coalescing: what rang while the
/// service was busy is handed over at once, so a burst of commits during one long pass costs
/// one more look afterwards, never a queue of them. Services that must keep up with the
/// store's growth (retention's size cap, the disk's keep-free floor) look after commits;
/// their timers do what no commit announces.
final class Wakeups: Sendable {
    private let pending = Mutex<Wakeup>([])
    private let stream: AsyncStream<Void>
    private let bell: AsyncStream<Void>.Continuation

    init() {
        (stream, bell) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func ring(_ reason: Wakeup) {
        _ = pending.withLock { $0.insert(reason) }
        bell.yield()
    }

    /// Calls `body` with what rang, one call at a time, until the task is cancelled: the timer
    /// rings every `interval()` (read again for each wait), and so does every notice of
    /// `commits`.
    func run(
        interval: @escaping @Sendable () -> Duration, commits: AsyncStream<CommitNotice>?, _ body: (Wakeup) async -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval())
                    self.ring(.timer)
                }
            }
            if let commits {
                group.addTask {
                    for await _ in commits { self.ring(.commit) }
                }
            }
            for await _ in stream {
                if Task.isCancelled { break }
                let reasons = pending.withLock { p -> Wakeup in
                    defer { p = [] }
                    return p
                }
                if !reasons.isEmpty { await body(reasons) }
            }
            group.cancelAll()
        }
    }
}
