import Foundation
import Synchronization

/// The largest size a file reached while it was watched, for a bound on a file that grows
/// and shrinks inside one call (the WAL between checkpoints). It polls `stat` on a thread
/// of its own every 100 µs rather than in a tight loop, so a watcher does not take a whole
/// core from the suites running beside it; a commit of the tests that use it writes about
/// 1 MiB, which takes far longer than one poll. Only ``largestSize(of:during:)`` starts one,
/// so the thread stops however the watched work ends (a thrown error included).
public final class FileSizeWatcher: @unchecked Sendable {
    private let done = Atomic<Bool>(false)
    private let largest = Atomic<Int64>(0)
    private let finished = DispatchSemaphore(value: 0)

    /// Runs `work` while watching the file at `path`; returns the largest size seen (0 when
    /// the file never existed).
    public static func largestSize(of path: String, during work: () async throws -> Void) async throws -> Int64 {
        let watcher = FileSizeWatcher(path: path)
        do {
            try await work()
        } catch {
            _ = watcher.stop()
            throw error
        }
        return watcher.stop()
    }

    private init(path: String) {
        let thread = Thread { [self] in
            var info = stat()
            while !done.load(ordering: .acquiring) {
                if stat(path, &info) == 0 { raise(to: Int64(info.st_size)) }
                usleep(100)
            }
            finished.signal()
        }
        thread.start()
    }

    private func stop() -> Int64 {
        done.store(true, ordering: .releasing)
        finished.wait()
        return largest.load(ordering: .acquiring)
    }

    private func raise(to value: Int64) {
        var current = largest.load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = largest.compareExchange(expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
