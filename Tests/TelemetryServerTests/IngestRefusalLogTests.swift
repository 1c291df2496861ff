import InMemoryLogging
import Logging
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// A refusal storm must not flood the journal: one line per reason per window, with the
/// number of refusals it stood for.
@Suite struct IngestRefusalLogTests {
    @Test func oneLinePerReasonPerMinuteWithTheCount() {
        let memory = InMemoryLogHandler()
        let clock = ManualClock()
        let log = IngestRefusalLog(logger: Logger(label: "t") { _ in memory }, clock: clock)
        for _ in 0..<500 { log.refused(reason: "storage_full", status: 507, message: "disk") }
        log.refused(reason: "rate_limited", status: 429, message: "token")
        #expect(memory.entries.count == 2)
        #expect(memory.entries.allSatisfy { $0.metadata["MESSAGE_ID"] == "ae757b8f0c53474885405f3173698026" })

        clock.advance(.seconds(30))
        log.refused(reason: "storage_full", status: 507, message: "disk")
        #expect(memory.entries.count == 2)
        clock.advance(.seconds(31))
        log.refused(reason: "storage_full", status: 507, message: "disk")
        #expect(memory.entries.count == 3)
        #expect(memory.entries.last?.metadata["refused_since_last_line"] == "500")
        #expect(memory.entries.last?.metadata["reason"] == "storage_full")
    }
}
