import Dispatch
import Foundation
import HotPaths

/// `hotpath-count PATH ITERATIONS`: prepares one hot path on its fixed data and runs it
/// ITERATIONS times, for `scripts/callgrind.sh`. The script runs it twice under callgrind, with
/// 0 and with N iterations, and divides the difference by N, so start-up and preparation (a
/// store filled for `scan`) are not counted. Exits non-zero when an operation handled the
/// wrong number of records, so a broken step never yields a plausible-looking count.
let arguments = CommandLine.arguments
guard arguments.count == 3, let path = HotPath(rawValue: arguments[1]), let iterations = Int(arguments[2]), iterations >= 0 else {
    let names = HotPath.allCases.map(\.rawValue).joined(separator: "|")
    FileHandle.standardError.write(Data("usage: hotpath-count \(names) ITERATIONS\n".utf8))
    exit(2)
}

/// Prepares, runs and finishes the step; the exit status.
@Sendable func count(_ path: HotPath, _ iterations: Int) async -> Int32 {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hotpath-\(path.rawValue)-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    do {
        let step = try await path.prepare(in: directory)
        for _ in 0..<iterations {
            let handled = try await step.run()
            if handled != step.expectedRecords {
                throw HotPathMismatch(path: path, handled: handled, expected: step.expectedRecords)
            }
        }
        await step.finish()
        print("\(path.rawValue): \(iterations) operations of \(step.expectedRecords) records")
        return 0
    } catch {
        FileHandle.standardError.write(Data("hotpath-count: \(error)\n".utf8))
        return 1
    }
}

// The main thread only waits for the work, which runs on the concurrency pool: an async top
// level would end in `dispatch_main`, whose signal thread valgrind 3.19 (Debian 12) cannot run
// (its `sigsuspend` handling writes to the caller's read-only signal mask and crashes).
// Detached: a plain `Task` here would inherit the main actor, whose thread is the one waiting.
let finished = DispatchSemaphore(value: 0)
nonisolated(unsafe) var status: Int32 = 1
Task.detached {
    status = await count(path, iterations)
    finished.signal()
}
finished.wait()
exit(status)
