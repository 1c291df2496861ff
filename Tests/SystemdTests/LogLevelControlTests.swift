import InMemoryLogging
import Logging
import Testing

@testable import Systemd

/// `systemctl reload` with a new `logLevel` must reach loggers made long before it.
@Suite struct LogLevelControlTests {
    @Test func loggersMadeBeforeALevelChangeFollowIt() {
        let control = LogLevelControl(.warning)
        let memory = InMemoryLogHandler()
        let logger = Logger(label: "t") { _ in ControlledLevelLogHandler(wrapping: memory, control: control) }
        logger.info("before")
        control.level = .debug
        logger.debug("after")
        #expect(memory.entries.map(\.message.description) == ["after"])

        // A copy that sets its own level keeps it (swift-log's contract), the others do not.
        var quiet = logger
        quiet.logLevel = .error
        quiet.warning("quiet copy")
        logger.warning("shared")
        #expect(memory.entries.map(\.message.description) == ["after", "shared"])
    }
}
