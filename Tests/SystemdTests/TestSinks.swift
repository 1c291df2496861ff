import Foundation
import Synchronization
import Systemd

/// A sink that keeps every entry it is given, for asserting on what would reach journald.
final class RecordingSink: JournalSink {
    private let stored = Mutex<[JournalEntry]>([])
    private let result: Int32

    /// - Parameter result: what every send returns (0, or a negative errno to simulate a
    ///   refusing journal).
    init(result: Int32 = 0) {
        self.result = result
    }

    var entries: [JournalEntry] { stored.withLock { $0 } }

    func send(_ entry: JournalEntry) -> Int32 {
        stored.withLock { $0.append(entry) }
        return result
    }
}

/// A sink that keeps the name of the thread each send ran on (`/proc/thread-self/comm`).
final class ThreadNameSink: JournalSink {
    private let names = Mutex<Set<String>>([])

    var threadNames: Set<String> { names.withLock { $0 } }

    func send(_ entry: JournalEntry) -> Int32 {
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        _ = names.withLock { $0.insert(comm.trimmingCharacters(in: .newlines)) }
        return 0
    }
}

/// A sink that blocks every send until released: a journald that has stopped reading.
final class StalledSink: JournalSink {
    private let gate = NSCondition()
    private let state = Mutex<(released: Bool, attempts: Int, sent: [JournalEntry])>((false, 0, []))

    var attempts: Int { state.withLock { $0.attempts } }
    var sent: [JournalEntry] { state.withLock { $0.sent } }

    func send(_ entry: JournalEntry) -> Int32 {
        state.withLock { $0.attempts += 1 }
        gate.lock()
        while !state.withLock({ $0.released }) { gate.wait() }
        gate.unlock()
        state.withLock { $0.sent.append(entry) }
        return 0
    }

    /// Lets every blocked and future send through.
    func release() {
        gate.lock()
        state.withLock { $0.released = true }
        gate.broadcast()
        gate.unlock()
    }
}

/// A sink that sleeps on every send: a journald that is slow but working.
struct SlowSink: JournalSink {
    let delay: Duration
    let recorder = RecordingSink()

    func send(_ entry: JournalEntry) -> Int32 {
        let (seconds, attoseconds) = delay.components
        var time = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        nanosleep(&time, nil)
        return recorder.send(entry)
    }
}

/// Polls `condition` until it holds or `timeout` passes; for waiting on the mirror's
/// sender thread without fixed sleeps.
func eventually(
    timeout: Duration = .seconds(10), _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline, !Task.isCancelled {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
