import Foundation
import Glibc
import Logging
import Metrics
import ServiceLifecycle
import Systemd
import TelemetryModel
import Testing

/// The native protocol end to end, against a real systemd-journald.
///
/// The test re-runs itself (this test binary, filtered to this suite) under
/// `Tests/IntegrationTests/journald-harness.sh`, which gives the child a private journald in
/// its own mount namespace. The child — recognised by an environment variable — bootstraps
/// logging (which must pick the journal), sends a mirrored record with `NativeJournalSink`,
/// runs a `JournalMirror` through a graceful shutdown, and logs a `MESSAGE_ID`. The parent
/// then reads the harness's journal files with `journalctl -D` and checks every field
/// arrived intact, multi-line values included. The host's journal is never touched.
@Suite("real journald", .enabled(if: realJournaldAvailable, "needs root, unshare and systemd-journald"))
struct RealJournaldTests {
    static let childVariable = "MAM_JOURNAL_TESTS_CHILD"
    static let tokenVariable = "MAM_JOURNAL_TESTS_TOKEN"
    static let harness = repositoryRoot.appendingPathComponent("Tests/IntegrationTests/journald-harness.sh")

    @Test("entries sent through the native protocol arrive with every field intact")
    func roundTrip() async throws {
        if let token = ProcessInfo.processInfo.environment[Self.childVariable] {
            try await Self.sendFromChild(token: token)
            return
        }
        let token = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let workdir = FileManager.default.temporaryDirectory.appendingPathComponent("mam-journald-\(token)")
        defer { try? FileManager.default.removeItem(at: workdir) }
        let testBinary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let child = try runProcess(
            "/bin/bash",
            [
                Self.harness.path, workdir.path, "--", testBinary, "--testing-library", "swift-testing",
                "--filter", "SystemdTests.RealJournaldTests",
            ],
            environment: [
                "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", Self.childVariable: token,
            ])
        #expect(child.status == 0, "child run failed:\n\(child.standardOutput)\n\(child.standardError)")

        let entries = try Self.readJournal(workdir.appendingPathComponent("journal"), match: "MAM_TEST_TOKEN=\(token)")
        let record = try #require(entries.first { $0["MAM_SOURCE"] == "sink" }, "\(entries)")
        #expect(record["MESSAGE"] == "enrollment failed\nstatus 216 Timeout")
        #expect(record["PRIORITY"] == "3")
        #expect(record["SYSLOG_IDENTIFIER"] == "mamtelemetryd")
        #expect(record["MAM_APP_ID"] == "com.contoso.mail")
        #expect(record["MAM_ENV"] == "ppe")
        #expect(record["MAM_LEVEL"] == "error")
        #expect(record["MAM_EVENT_TIME"] == "2026-11-18T11:06:40.123Z")
        #expect(record["MAM_IDENTITY_HASH"] == "h:5d41")
        #expect(record["MAM_BINARY"] == "a\u{0}b")
        #expect(!record.values.contains { $0.contains("user@contoso.com") })

        let mirrored = entries.filter { $0["MAM_SOURCE"] == "mirror" }.compactMap { $0["MESSAGE"] }
        #expect(mirrored == (0..<100).map { "mirrored \($0)" })

        let started = try #require(entries.first { $0["MESSAGE_ID"] == DaemonMessageID.started.id }, "\(entries)")
        #expect(started["PRIORITY"] == "5")
        #expect(started["CODE_FILE"]?.hasSuffix("RealJournaldTests.swift") == true)
        #expect(started["CODE_FUNC"] == "sendFromChild(token:)")
        #expect(started["MAM_LOGGER"] == "mamtelemetryd.test")
        #expect(started["MESSAGE"] == "mamtelemetryd started")
    }

    /// The child half: runs inside the harness, next to the private journald.
    static func sendFromChild(token: String) async throws {
        #expect(JournalSocket.isReachable())
        #expect(DaemonLogging.bootstrap(level: .info) == .journal)
        let logger = Logger(label: "mamtelemetryd.test")

        let keys = RecordKeys(
            time: 1_795_000_000_123, appId: "com.contoso.mail", deviceId: "dev-1", identity: "user@contoso.com",
            detail: "Enrollment", level: .error)
        var record = JournalEntry.logRecord(
            keys: keys, message: "enrollment failed\nstatus 216 Timeout", env: .ppe, identityHash: "h:5d41")
        record.append("MAM_TEST_TOKEN", token)
        record.append("MAM_SOURCE", "sink")
        record.append("MAM_BINARY", bytes: [97, 0, 98])
        #expect(NativeJournalSink().send(record) == 0)

        let mirror = JournalMirror(logger: logger, metricsFactory: NOOPMetricsHandler.instance, clock: SystemWallClock())
        let group = ServiceGroup(services: [mirror], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            mirror.submit(
                (0..<100).map { index in
                    var entry = JournalEntry.logRecord(
                        keys: RecordKeys(time: 0, appId: "com.contoso.mail", level: .info),
                        message: "mirrored \(index)", env: .prod, identityHash: nil)
                    entry.append("MAM_TEST_TOKEN", token)
                    entry.append("MAM_SOURCE", "mirror")
                    return entry
                })
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(mirror.status.sent == 100 && mirror.status.reachable)

        logger.notice("mamtelemetryd started", metadata: .messageID(.started, ["test_token": "\(token)"]))
    }

    /// Entries from `journalctl -D directory -o json match`, each field as text (journalctl
    /// prints values that are not printable UTF-8 as byte arrays).
    static func readJournal(_ directory: URL, match: String) throws -> [[String: String]] {
        let result = try runProcess(
            "/usr/bin/journalctl", ["-D", directory.path, "-o", "json", "--no-pager", match])
        #expect(result.status == 0, "\(result.standardError)")
        return try result.standardOutput.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            return object.compactMapValues { value in
                if let text = value as? String { return text }
                if let bytes = value as? [Int] { return String(decoding: bytes.map { UInt8($0) }, as: UTF8.self) }
                return nil
            }
        }
    }
}

/// Whether this machine can run the journald harness: root (for the mount namespace) and
/// systemd's tools.
let realJournaldAvailable =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/lib/systemd/systemd-journald")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/journalctl")
