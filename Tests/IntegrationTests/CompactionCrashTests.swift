import Foundation
import TestSupport
import Testing

/// `kill -9` while the compactor merges batches into a segment: inside its transaction
/// (after the batches are deleted, before the segment is inserted) and right after it
/// commits. After restart every acknowledged record is there exactly once, pages read the
/// same as before compaction, and the store holds the old batches or the segment, never both
/// or neither. The daemon stops itself at the point through `MAMTELEMETRYD_TEST_CRASH_AT`.
@Suite(.serialized) struct CompactionCrashTests {
    static let crashVariable = "MAMTELEMETRYD_TEST_CRASH_AT"
    static let noCompaction = ["--store-compact-after-seconds", "31536000"]
    static let compactAtOnce = ["--store-compact-after-seconds", "0"]

    /// Every page of events and logs in both orders, 300 records a page, as the API sends them.
    static func pages(_ d: DaemonProcess) async throws -> [String] {
        var out: [String] = []
        for (path, member) in [("/v1/events", "events"), ("/v1/logs", "logs")] {
            for order in ["asc", "desc"] {
                var cursor: String?
                repeat {
                    var query = "\(path)?env=prod&limit=300&order=\(order)"
                    if let cursor { query += "&cursor=\(cursor)" }
                    let page = try await d.json(query)
                    let records = page[member] as? [Any] ?? []
                    out.append(String(decoding: try JSONSerialization.data(withJSONObject: records, options: [.sortedKeys]), as: UTF8.self))
                    cursor = page["nextCursor"] as? String
                } while cursor != nil
            }
        }
        return out
    }

    /// Runs `sqlite3` on the prod database and returns its one-line answer.
    static func sqlite(_ d: DaemonProcess, _ sql: String) throws -> String {
        let pipe = Pipe()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = [d.dataDirectory.appendingPathComponent("prod/records.sqlite").path, sql]
        p.standardOutput = pipe
        try p.run()
        p.waitUntilExit()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    static let segmentRows = "SELECT count(*) FROM batch WHERE substr(keys, 1, 1) IN (x'01', x'02')"
    static let batchRows = "SELECT count(*) FROM batch WHERE substr(keys, 1, 1) NOT IN (x'01', x'02')"

    /// Stores events and logs in many small requests (one batch each, the kinds' ids
    /// interleaved); returns the acknowledged event ids.
    static func ingest(_ d: DaemonProcess) async throws -> [String] {
        var acked: [String] = []
        for n in 0..<30 {
            let ids = (0..<40).map { "c\(n)-\($0)" }
            let body = ids.enumerated().map { i, id in
                #"{"name":"AppLaunch","appId":"com.crash","deviceId":"0f8e44aa-61b2-4c1e-9d2a-\#(String(format: "%012x", i % 7))","sessionId":"5b1d6a43-6f7e-4b8e-8d4c-\#(String(format: "%012x", n))","eventId":"\#(id)","data":{"managementType":"MDM"}}"#
            }.joined(separator: "\n")
            let (status, _, _) = try await d.post("/v1/telemetry", body: Array(body.utf8))
            if status == 200 { acked += ids }
            let log = #"{"level":"info","message":"round \#(n)","appId":"com.crash","deviceId":"d"}"#
            let (logStatus, _, _) = try await d.post("/v1/logs", body: Array(log.utf8))
            #expect(logStatus == 200)
        }
        return acked
    }

    @Test(arguments: ["compaction-mid-merge", "after-compaction"])
    func killNineDuringCompactionKeepsEveryRecordOnce(point: String) async throws {
        let d = try DaemonProcess(extraArguments: Self.noCompaction)
        defer { d.cleanUp() }
        try await d.start()
        let acked = try await Self.ingest(d)
        #expect(acked.count == 1200)
        let reference = try await Self.pages(d)
        d.stop()
        #expect(try Self.sqlite(d, Self.segmentRows) == "0")

        // Compaction at once, and the daemon kills itself at `point` of the first merge.
        d.extraArguments = Self.compactAtOnce
        d.environment = [Self.crashVariable: point]
        try? await d.start()
        let p = try #require(d.process)
        let deadline = Date().addingTimeInterval(30)
        while p.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard !p.isRunning else {
            d.kill()
            Issue.record("the daemon did not reach \(point) within 30 s")
            return
        }
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGKILL, "exit \(p.terminationStatus)")

        // Restarted without compaction: the crash left the batches (mid-merge) or the first
        // segment (after its commit), and the records read exactly as before.
        d.environment = [:]
        d.extraArguments = Self.noCompaction
        try await d.start()
        let segments = Int(try Self.sqlite(d, Self.segmentRows)) ?? -1
        #expect(point == "compaction-mid-merge" ? segments == 0 : segments == 1, "\(segments) segments after a crash at \(point)")
        let stored = try await d.allEvents().compactMap { $0["eventId"] as? String }
        #expect(stored.count == Set(stored).count, "no record twice")
        #expect(Set(stored) == Set(acked), "\(Set(acked).subtracting(stored).count) acknowledged events lost")
        #expect(try await Self.pages(d) == reference)
        d.stop()

        // Compaction finishes after the crash; pages still match and retries are recognised.
        d.extraArguments = Self.compactAtOnce
        try await d.start()
        let finished = Date().addingTimeInterval(30)
        while try Self.sqlite(d, Self.batchRows) != "0", Date() < finished { try await Task.sleep(for: .milliseconds(200)) }
        #expect(try Self.sqlite(d, Self.batchRows) == "0")
        #expect(try await Self.pages(d) == reference)
        let retry = #"{"name":"AppLaunch","appId":"com.crash","deviceId":"d","eventId":"c3-5"}"#
        let (status, body, _) = try await d.post("/v1/telemetry", body: Array(retry.utf8))
        #expect(status == 200 && (parseJSON(body)["dropped"] as? [String: Int])?["duplicate"] == 1, "\(parseJSON(body))")
    }
}
