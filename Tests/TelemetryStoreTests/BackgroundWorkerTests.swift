import Foundation
import Testing

@testable import TelemetryStore

#if canImport(Glibc)
    import Glibc
#endif

/// The compactor's thread as an operator sees it in `top -H`: under its own name, and at the
/// lower priority that lets ingest requests have the cores first.
struct BackgroundWorkerTests {
    @Test func jobsRunOnANamedNicedThread() async throws {
        let worker = BackgroundWorker(name: "compactor", niceness: 7, idleExit: .milliseconds(200))
        let seen = try await worker.run {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            errno = 0
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            return (comm.trimmingCharacters(in: .newlines), nice)
        }
        #expect(seen.0 == "compactor")
        #expect(seen.1 == 7)
        // A name past the kernel's 15 characters is cut, not refused.
        let long = BackgroundWorker(name: "a-worker-with-a-long-name", idleExit: .milliseconds(200))
        let comm = try await long.run {
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
        }
        #expect(comm == "a-worker-with-a")
    }
}
