import Logging
import Systemd
import Testing

@Suite("JournaldLogHandler")
struct JournaldLogHandlerTests {
    @Test("a log call becomes one entry with the code location, label and metadata")
    func fieldMapping() throws {
        let sink = RecordingSink()
        var handler = JournaldLogHandler(
            label: "mamtelemetryd.ingest", identifier: "mamtelemetryd", level: .trace, sink: sink,
            metadataProvider: nil)
        handler[metadataKey: "component"] = "committer"
        let logger = Logger(label: "mamtelemetryd.ingest") { _ in handler }

        let line: UInt = #line + 1
        logger.notice(
            "ingest refused\nqueue full", metadata: .messageID(.ingestRefused, ["retry.after": "5", "component": "http"]))

        let entry = try #require(sink.entries.first)
        #expect(sink.entries.count == 1)
        #expect(entry.value(of: "MESSAGE") == "ingest refused\nqueue full")
        #expect(entry.value(of: "PRIORITY") == "5")
        #expect(entry.value(of: "SYSLOG_IDENTIFIER") == "mamtelemetryd")
        #expect(entry.value(of: "CODE_FILE")?.hasSuffix("JournaldLogHandlerTests.swift") == true)
        #expect(entry.value(of: "CODE_LINE") == String(line))
        #expect(entry.value(of: "CODE_FUNC") == "fieldMapping()")
        #expect(entry.value(of: "MAM_LOGGER") == "mamtelemetryd.ingest")
        #expect(entry.value(of: "MESSAGE_ID") == DaemonMessageID.ingestRefused.id)
        #expect(entry.value(of: "MAM_RETRY_AFTER") == "5")
        // The call's metadata wins over the handler's.
        #expect(entry.values(of: "MAM_COMPONENT") == ["http"])
        #expect(entry.fields.allSatisfy { JournalFieldName.isValid($0.name) })
    }

    @Test(
        "swift-log levels map to syslog priorities",
        arguments: [
            (Logger.Level.trace, "7"), (.debug, "7"), (.info, "6"), (.notice, "5"), (.warning, "4"),
            (.error, "3"), (.critical, "2"),
        ])
    func priorities(level: Logger.Level, priority: String) {
        let sink = RecordingSink()
        let handler = JournaldLogHandler(label: "t", level: .trace, sink: sink, metadataProvider: nil)
        Logger(label: "t") { _ in handler }.log(level: level, "x")
        #expect(sink.entries.map { $0.value(of: "PRIORITY") } == [priority])
    }

    @Test("the handler's level filters, and metadata providers contribute fields")
    func levelAndProvider() {
        let sink = RecordingSink()
        let provider = Logger.MetadataProvider { ["request-id": "r-42"] }
        let handler = JournaldLogHandler(label: "t", level: .warning, sink: sink, metadataProvider: provider)
        let logger = Logger(label: "t") { _ in handler }
        logger.info("filtered out")
        logger.warning("kept")
        #expect(sink.entries.count == 1)
        #expect(sink.entries.first?.value(of: "MAM_REQUEST_ID") == "r-42")
    }

    @Test("an attached error is sent as MAM_ERROR")
    func attachedError() {
        struct StoreFull: Error, CustomStringConvertible { var description: String { "store full" } }
        let handler = JournaldLogHandler(label: "t", level: .trace, sink: RecordingSink(), metadataProvider: nil)
        let event = LogEvent(
            level: .error, message: "commit failed", error: StoreFull(), metadata: nil, source: nil,
            file: "f.swift", function: "commit()", line: 7)
        #expect(handler.entry(for: event).value(of: "MAM_ERROR") == "store full")
    }

    @Test("a refused entry does not crash or throw: it falls back to stderr")
    func refusedFallsBack() {
        let sink = RecordingSink(result: -111)  // -ECONNREFUSED
        let handler = JournaldLogHandler(label: "t", level: .trace, sink: sink, metadataProvider: nil)
        Logger(label: "t") { _ in handler }.error("still visible on stderr")
        #expect(sink.entries.count == 1)
    }

    @Test("the message id helper and the ids' shape")
    func messageIDs() {
        #expect(Logger.Metadata.messageID(.started) == ["MESSAGE_ID": "a6099522270d4485853645158218332e"])
        let ids = DaemonMessageID.allCases.map(\.id)
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        }
        #expect(DaemonMessageID.started.uuidString == "a6099522-270d-4485-8536-45158218332e")
    }

    @Test("bootstrap picks the journal handler only when the journal is reachable")
    func backendChoice() {
        let journal = DaemonLogging.makeHandlerFactory(backend: .journal, level: .notice)("a", nil)
        let stderr = DaemonLogging.makeHandlerFactory(backend: .standardError, level: .notice)("a", nil)
        #expect(journal is JournaldLogHandler)
        #expect(stderr is StreamLogHandler)
        #expect(journal.logLevel == .notice && stderr.logLevel == .notice)
    }
}
