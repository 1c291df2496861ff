import Synchronization

/// A one-shot signal an async caller can wait for and any thread can fire, any number of
/// times (only the first counts). The mirror uses it so `run()` returns when its sender
/// thread ends *or* when waiting for it must stop, whichever comes first.
final class CompletionSignal: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Void, Never>)
        case fired
    }

    private let state = Mutex(State.pending)

    /// Wakes the waiter (now or when it starts waiting). Later calls do nothing.
    func fire() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            switch state {
            case .pending:
                state = .fired
                return nil
            case .waiting(let continuation):
                state = .fired
                return continuation
            case .fired:
                return nil
            }
        }
        waiter?.resume()
    }

    /// Suspends until ``fire()`` has been called; at most one waiter.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired: Bool = state.withLock { state in
                switch state {
                case .pending:
                    state = .waiting(continuation)
                    return false
                case .fired:
                    return true
                case .waiting:
                    preconditionFailure("CompletionSignal supports a single waiter")
                }
            }
            if fired { continuation.resume() }
        }
    }
}
