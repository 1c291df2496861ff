import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One OS thread at a lower scheduling priority (a higher nice value) for work that can wait:
/// the compactor's decoding and re-encoding of batches. On two cores at full ingest the
/// requests need both, and compaction at normal priority took about a core from them; niced,
/// it takes the CPU the requests leave and catches up when a burst ends. The work it does is
/// unchanged, and anything a reader or a crash can see is still written by the store's
/// transactions, not here.
///
/// The thread starts with the first job and ends after `idleExit` without one, so a store
/// that never compacts (or a test's) holds no thread.
final class BackgroundWorker: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var threadRunning = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let niceness: Int32
    private let name: String
    private let idleExit: DispatchTimeInterval

    init(name: String, niceness: Int32 = 10, idleExit: DispatchTimeInterval = .seconds(30)) {
        self.name = name
        self.niceness = niceness
        self.idleExit = idleExit
    }

    /// Runs `body` on the worker thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { s in
                s.jobs.append { continuation.resume(with: Result { try body() }) }
                defer { s.threadRunning = true }
                return !s.threadRunning
            }
            if start { startThread() }
            wake.signal()
        }
    }

    private func startThread() {
        let thread = Thread { [self] in
            // On Linux a nice value belongs to the calling thread (PRIO_PROCESS with who 0).
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
            // Named from inside, through /proc, so `top -H` and `ps -L` show it: on Linux
            // Foundation keeps `Thread.name` to itself, and `pthread_setname_np` is not
            // visible to Swift (the kernel keeps 15 characters).
            try? Data(name.prefix(15).utf8).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
            while true {
                if wake.wait(timeout: .now() + idleExit) == .timedOut {
                    let exit = state.withLock { s in
                        guard s.jobs.isEmpty else { return false }
                        s.threadRunning = false
                        return true
                    }
                    if exit { return }
                    continue
                }
                let job = state.withLock { $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }
                job?()
            }
        }
        thread.name = name
        thread.start()
    }
}
