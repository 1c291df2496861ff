import Glibc
import Logging
import MetricsTestKit
import ServiceLifecycle
import Synchronization
import Systemd
import TelemetryModel
import Testing

@Suite("JournalMirror")
struct JournalMirrorTests {
    static func entry(_ index: Int) -> JournalEntry {
        JournalEntry.logRecord(
            keys: RecordKeys(time: Int64(index), appId: "com.contoso.mail", level: .info),
            message: "record \(index)", env: .prod, identityHash: nil)
    }

    static func entries(_ range: Range<Int>) -> [JournalEntry] { range.map(entry) }

    /// A logger whose entries land in `sink`, to count what the mirror says about itself.
    static func logger(_ sink: RecordingSink) -> Logger {
        Logger(label: "test.mirror") { label in
            JournaldLogHandler(label: label, level: .trace, sink: sink, metadataProvider: nil)
        }
    }

    /// Runs `mirror` in a ServiceGroup for the duration of `body`, then shuts the group
    /// down gracefully and waits for it.
    static func withRunningMirror(
        _ mirror: JournalMirror, _ body: (ServiceGroup) async throws -> Void
    ) async throws {
        let group = ServiceGroup(services: [mirror], logger: Logger(label: "test.group") { _ in SwiftLogNoOpLogHandler() })
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                try await body(group)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test("entries reach the sink in order, and the counters and metrics say so")
    func sendsInOrder() async throws {
        let sink = RecordingSink()
        let metrics = TestMetrics()
        let mirror = JournalMirror(
            sink: sink, logger: Self.logger(RecordingSink()), metricsFactory: metrics, clock: SystemWallClock(), initiallyReachable: true)
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(Self.entries(0..<300))
            mirror.submit(Self.entry(300))
            #expect(await eventually { sink.entries.count == 301 })
        }
        #expect(sink.entries.map { $0.value(of: "MESSAGE") } == (0...300).map { "record \($0)" })
        let status = mirror.status
        #expect(status.sent == 301 && status.failed == 0 && status.dropped == 0 && status.queueDepth == 0)
        #expect(status.reachable && status.enabled && status.lastError == nil)
        #expect(metrics.counterTotal(label: MetricName.journalMirrorSent.rawValue) == 301)
        #expect(try metrics.expectGauge(MetricName.journalMirrorQueueDepth.rawValue).lastValue == 0)
        #expect(try metrics.expectTimer(MetricName.journalMirrorSendDuration.rawValue).values.count == 301)
    }

    @Test("every send runs on the sender thread, named journal-mirror as top -H shows it")
    func senderThreadIsNamed() async throws {
        let sink = ThreadNameSink()
        let mirror = JournalMirror(
            sink: sink, logger: Self.logger(RecordingSink()), metricsFactory: TestMetrics(), clock: SystemWallClock(),
            initiallyReachable: true)
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(Self.entries(0..<20))
            #expect(await eventually { mirror.status.sent == 20 })
        }
        #expect(sink.threadNames == ["journal-mirror"])
    }

    @Test("submit never waits on a stalled journal; the bound holds and the excess is dropped")
    func neverBlocks() async throws {
        let sink = StalledSink()
        let metrics = TestMetrics()
        let mirror = JournalMirror(
            configuration: JournalMirrorConfiguration(queueCapacity: 10), sink: sink,
            logger: Self.logger(RecordingSink()), metricsFactory: metrics, clock: SystemWallClock(), initiallyReachable: true)
        // If submit ever blocked, this test would hang rather than fail: release the sink
        // after a generous time so it fails instead, and check it was not needed.
        let releasedByTimeout = Atomic<Bool>(false)
        let safety = Task {
            try await Task.sleep(for: .seconds(20))
            releasedByTimeout.store(true, ordering: .relaxed)
            sink.release()
        }
        defer { safety.cancel() }

        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(Self.entry(0))
            #expect(await eventually { sink.attempts == 1 })  // the sender is stuck in a send
            for index in 1...50 { mirror.submit(Self.entry(index)) }
            mirror.submit(Self.entries(51..<1000))
            let neededRelease = releasedByTimeout.load(ordering: .relaxed)
            #expect(!neededRelease)

            let status = mirror.status
            #expect(status.queueDepth == 10)  // the in-flight entry counts against the bound
            #expect(status.dropped == 990)
            #expect(metrics.counterTotal(label: MetricName.journalMirrorDropped.rawValue) == 990)
            #expect((try? metrics.expectGauge(MetricName.journalMirrorQueueDepth.rawValue))?.lastValue == 10)

            sink.release()
            #expect(await eventually { mirror.status.sent == 10 })
        }
        // Oldest kept, newest dropped.
        #expect(sink.sent.map { $0.value(of: "MESSAGE") } == (0..<10).map { "record \($0)" })
    }

    @Test("a slow journal is measured, not waited on")
    func slowJournal() async throws {
        let sink = SlowSink(delay: .milliseconds(20))
        let metrics = TestMetrics()
        let mirror = JournalMirror(
            sink: sink, logger: Self.logger(RecordingSink()), metricsFactory: metrics, clock: SystemWallClock(), initiallyReachable: true)
        try await Self.withRunningMirror(mirror) { _ in
            for index in 0..<20 { mirror.submit(Self.entry(index)) }
            // All 20 were queued although sending them takes ~400 ms.
            #expect(mirror.status.queueDepth + Int(mirror.status.sent) == 20)
            #expect(await eventually { mirror.status.sent == 20 })
        }
        #expect(sink.recorder.entries.count == 20)
        #expect(try metrics.expectTimer(MetricName.journalMirrorSendDuration.rawValue).values.count == 20)
    }

    @Test("graceful shutdown flushes what is queued before run() returns")
    func flushesOnShutdown() async throws {
        let sink = SlowSink(delay: .milliseconds(2))
        let mirror = JournalMirror(
            sink: sink, logger: Self.logger(RecordingSink()), metricsFactory: TestMetrics(), clock: SystemWallClock(),
            initiallyReachable: true)
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(Self.entries(0..<200))
        }
        // withRunningMirror returned: the group (and so run()) has finished.
        #expect(sink.recorder.entries.count == 200)
        #expect(mirror.status.sent == 200 && mirror.status.dropped == 0 && mirror.status.queueDepth == 0)
        // After shutdown new entries are refused and counted.
        mirror.submit(Self.entry(999))
        #expect(mirror.status.dropped == 1)
    }

    @Test("shutdown gives up at the flush deadline even if journald never answers")
    func flushDeadline() async throws {
        let sink = StalledSink()
        let log = RecordingSink()
        let mirror = JournalMirror(
            configuration: JournalMirrorConfiguration(shutdownFlushTimeout: .milliseconds(100)), sink: sink,
            logger: Self.logger(log), metricsFactory: TestMetrics(), clock: SystemWallClock(), initiallyReachable: true)
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(Self.entries(0..<50))
            #expect(await eventually { sink.attempts == 1 })
        }
        #expect(log.entries.contains { $0.value(of: "MESSAGE")?.contains("gave up waiting") == true })
        // The stuck send finishes later; everything else is counted as dropped.
        sink.release()
        #expect(await eventually { mirror.status.sent + mirror.status.dropped == 50 })
        #expect(mirror.status.sent == 1)
    }

    @Test("an absent journal is reported once, counted, and not retried in a loop")
    func unavailableJournal() async throws {
        let sink = RecordingSink(result: -ENOENT)
        let log = RecordingSink()
        let metrics = TestMetrics()
        let mirror = JournalMirror(
            configuration: JournalMirrorConfiguration(unavailableRetryInterval: .seconds(3600)), sink: sink,
            logger: Self.logger(log), metricsFactory: metrics, clock: SystemWallClock(), initiallyReachable: true)
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(Self.entries(0..<5))
            #expect(await eventually { mirror.status.failed == 5 })
            mirror.submit(Self.entries(5..<10))
            #expect(await eventually { mirror.status.failed == 10 })
        }
        #expect(sink.entries.count == 1)  // one attempt; the rest waited for the retry interval
        let status = mirror.status
        #expect(!status.reachable && status.sent == 0 && status.dropped == 0)
        #expect(status.lastError?.contains("ENOENT") == true)
        #expect(metrics.counterTotal(label: MetricName.journalMirrorFailed.rawValue) == 10)
        let notices = log.entries.filter { $0.value(of: "MESSAGE_ID") == DaemonMessageID.journalUnavailable.id }
        #expect(notices.count == 1)
        #expect(notices.first?.value(of: "PRIORITY") == "4")
    }

    @Test("a journal that comes back is used again, and the recovery is logged")
    func journalReturns() async throws {
        final class FlakySink: JournalSink {
            let calls = Atomic<Int>(0)
            func send(_ entry: JournalEntry) -> Int32 {
                calls.add(1, ordering: .relaxed).newValue == 1 ? -ECONNREFUSED : 0
            }
        }
        let sink = FlakySink()
        let log = RecordingSink()
        let mirror = JournalMirror(
            configuration: JournalMirrorConfiguration(unavailableRetryInterval: .zero), sink: sink,
            logger: Self.logger(log), metricsFactory: TestMetrics(), clock: SystemWallClock(), initiallyReachable: true)
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(Self.entries(0..<3))
            #expect(await eventually { mirror.status.sent == 2 })
        }
        #expect(mirror.status.reachable && mirror.status.failed == 1)
        #expect(mirror.status.lastError?.contains("ECONNREFUSED") == true)
        #expect(log.entries.contains { $0.value(of: "MESSAGE")?.contains("reachable again") == true })
    }

    @Test("level filter, disabling, and a second run() are handled")
    func configuration() async throws {
        let sink = RecordingSink()
        let mirror = JournalMirror(
            configuration: JournalMirrorConfiguration(minimumLevel: .warning), sink: sink,
            logger: Self.logger(RecordingSink()), metricsFactory: TestMetrics(), clock: SystemWallClock(), initiallyReachable: false)
        #expect(!mirror.shouldMirror(level: .verbose) && !mirror.shouldMirror(level: .info))
        #expect(mirror.shouldMirror(level: .warning) && mirror.shouldMirror(level: .error))
        #expect(!mirror.status.reachable)

        mirror.apply(JournalMirrorConfiguration(enabled: false))
        #expect(!mirror.shouldMirror(level: .error))
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(Self.entries(0..<5))
            #expect(mirror.status.queueDepth == 0 && mirror.status.dropped == 0 && !mirror.status.enabled)
            mirror.apply(JournalMirrorConfiguration())
            mirror.submit(Self.entry(5))
            #expect(await eventually { sink.entries.count == 1 })
            await #expect(throws: JournalMirrorError.alreadyRunning) { try await mirror.run() }
        }
    }

    @Test("cancellation returns at once and drops what is queued")
    func cancellation() async throws {
        let sink = StalledSink()
        let mirror = JournalMirror(
            sink: sink, logger: Self.logger(RecordingSink()), metricsFactory: TestMetrics(), clock: SystemWallClock(),
            initiallyReachable: true)
        let task = Task { try await mirror.run() }
        mirror.submit(Self.entries(0..<20))
        #expect(await eventually { sink.attempts == 1 })
        task.cancel()
        try await task.value
        sink.release()
        #expect(await eventually { mirror.status.sent + mirror.status.dropped == 20 })
    }

    @Test("decoded records are filtered by level, hashed, and mirrored")
    func decodedRecords() async throws {
        let sink = RecordingSink()
        let mirror = JournalMirror(
            configuration: JournalMirrorConfiguration(minimumLevel: .info), sink: sink,
            logger: Self.logger(RecordingSink()), metricsFactory: TestMetrics(), clock: SystemWallClock(), initiallyReachable: true)
        func record(_ level: LogLevel, identity: String) -> DecodedRecord {
            DecodedRecord(
                json: [], keys: RecordKeys(time: 0, appId: "a", identity: identity, level: level), flags: AppFlags(),
                eventId: nil, message: "\(level.name) message")
        }
        let hashed = Mutex<[String]>([])
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(
                [
                    record(.verbose, identity: "v@contoso.com"), record(.warning, identity: "w@contoso.com"),
                    record(.info, identity: ""),
                ],
                env: .ppe
            ) { record, _ in
                let identity = record.keys.identity
                if !identity.isEmpty { hashed.withLock { $0.append(identity) } }
                return MirroredRecord(
                    keys: record.keys, message: record.message ?? "", identityHash: identity.isEmpty ? nil : "h:\(identity.count)")
            }
            #expect(await eventually { sink.entries.count == 2 })
        }
        #expect(sink.entries.map { $0.value(of: "MESSAGE") } == ["warning message", "info message"])
        #expect(sink.entries.map { $0.value(of: "MAM_IDENTITY_HASH") } == ["h:13", nil])
        #expect(sink.entries.allSatisfy { $0.value(of: "MAM_ENV") == "ppe" })
        #expect(hashed.withLock { $0 } == ["w@contoso.com"])
        #expect(mirror.status.summary == "journal reachable: sent 2, failed 0, dropped 0, queued 0")
    }

    @Test(
        "entries carry what the caller shows of each record under the configured personal-data mode, never the raw identity",
        arguments: [nil, JournalPersonalData.redact, .include])
    func personalData(mode: JournalPersonalData?) async throws {
        let sink = RecordingSink()
        var configuration = JournalMirrorConfiguration()
        if let mode { configuration.personalData = mode }
        let mirror = JournalMirror(
            configuration: configuration, sink: sink, logger: Self.logger(RecordingSink()), metricsFactory: TestMetrics(),
            clock: SystemWallClock(),
            initiallyReachable: true)
        let records = [LogLevel.verbose, .info, .error].map { level in
            DecodedRecord(
                json: [], keys: RecordKeys(time: 0, appId: "a", deviceId: "jane@contoso.com", identity: "jane@contoso.com", level: level),
                flags: AppFlags(), eventId: nil, message: "\(level.name) text for jane@contoso.com")
        }
        try await Self.withRunningMirror(mirror) { _ in
            mirror.submit(records, env: .prod) { record, personalData in
                var keys = record.keys
                keys.deviceId = "shown-device"
                keys.level = nil
                return MirroredRecord(keys: keys, message: "\(personalData.rawValue): \(record.message ?? "")", identityHash: "user-1")
            }
            #expect(await eventually { sink.entries.count == 3 })
        }
        let expected = (mode ?? .redact).rawValue
        #expect(sink.entries.map { $0.value(of: "MESSAGE") } == records.map { "\(expected): \($0.message ?? "")" })
        #expect(
            sink.entries.allSatisfy { $0.value(of: "MAM_DEVICE_ID") == "shown-device" && $0.value(of: "MAM_IDENTITY_HASH") == "user-1" })
        #expect(sink.entries.map { $0.value(of: "MAM_LEVEL") } == ["verbose", "info", "error"], "the level is the record's own")
        let fields = sink.entries.flatMap(\.fields).filter { $0.name != "MESSAGE" }
        #expect(!fields.contains { String(decoding: $0.value, as: UTF8.self).contains("jane@contoso.com") })
    }

    @Test("the status summary names the error when the journal is away")
    func statusSummary() {
        let status = JournalMirrorStatus(
            enabled: true, reachable: false, sent: 1, failed: 2, dropped: 3, queueDepth: 4,
            lastError: "sd_journal_sendv: No such file or directory (ENOENT)")
        #expect(
            status.summary
                == "journal unreachable (sd_journal_sendv: No such file or directory (ENOENT)): sent 1, failed 2, dropped 3, queued 4")
        var disabled = status
        disabled.enabled = false
        #expect(disabled.summary == "journal mirror disabled")
    }
}
