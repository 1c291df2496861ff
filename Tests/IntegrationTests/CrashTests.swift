import Foundation
import TestSupport
import Testing

// The daemon killed for real (SIGKILL from outside, or by itself at a named point through its
// test hook `MAMTELEMETRYD_TEST_CRASH_AT`) and restarted on the same data directory: what it
// acknowledged survives whole and once, during ingest, between a request's two environments
// and an export's two kinds, and in the middle of a compaction.

/// SIGKILL during ingest, several rounds: every acknowledged event is there after each
/// restart, nothing is duplicated, and no batch is half-visible (issue 2, SPEC §4).
@Suite(.serialized) struct CrashDurabilityTests {
    actor Acked {
        var ids = Set<String>()
        func add(_ batch: [String]) { ids.formUnion(batch) }
    }

    @Test func killNineDuringIngestLosesNothingAcknowledged() async throws {
        let d = try DaemonProcess()
        defer { d.cleanUp() }
        let acked = Acked()
        for round in 0..<3 {
            try await d.start()
            let deadline = Date().addingTimeInterval(1.5)
            await withTaskGroup(of: Void.self) { group in
                for client in 0..<6 {
                    group.addTask {
                        var n = 0
                        while Date() < deadline {
                            let ids = (0..<50).map { "r\(round)-c\(client)-\(n)-\($0)" }
                            n += 1
                            let body = ids.map {
                                #"{"name":"AppLaunch","appId":"com.crash","deviceId":"d","eventId":"\#($0)","data":{"managementType":"MDM"}}"#
                            }
                            .joined(separator: "\n")
                            if let (status, _, _) = try? await d.post("/v1/telemetry", body: Array(body.utf8)), status == 200 {
                                await acked.add(ids)
                            }
                        }
                    }
                }
                // Kill in the middle of the traffic.
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(900))
                    d.kill(signal: SIGKILL)
                }
            }
            d.kill(signal: SIGKILL)
            let started = Date()
            try await d.start()
            #expect(Date().timeIntervalSince(started) < 10, "start-up after a crash stays short")
            let events = try await d.allEvents()
            let stored = events.compactMap { $0["eventId"] as? String }
            let ackedIDs = await acked.ids
            #expect(ackedIDs.count > 0)
            #expect(Set(stored).count == stored.count, "no duplicates after round \(round)")
            #expect(ackedIDs.isSubset(of: Set(stored)), "round \(round): \(ackedIDs.subtracting(stored).count) acknowledged events lost")
            // No half-visible batch: every request's 50 events are all there or all absent.
            var perRequest: [String: Int] = [:]
            for id in stored { perRequest[id.split(separator: "-").prefix(3).joined(separator: "-"), default: 0] += 1 }
            #expect(perRequest.values.allSatisfy { $0 == 50 })
            d.kill(signal: SIGKILL)
        }
    }
}

/// `kill -9` between the two environments' commits of a request with prod and PPE records:
/// after restart the request is wholly absent (crash before its commit point) or wholly
/// stored (crash after it), never half (issue 11 item 8). The daemon stops itself with
/// SIGKILL at the chosen point through its documented test hook `MAMTELEMETRYD_TEST_CRASH_AT`.
@Suite(.serialized) struct CrossEnvironmentCrashTests {
    static let prodIds = ["x-prod-1", "x-prod-2", "x-prod-3"]
    static let ppeIds = ["x-ppe-1", "x-ppe-2"]

    static var mixedBody: [UInt8] {
        let prod = prodIds.map { #"{"name":"AppLaunch","appId":"com.contoso.crash","deviceId":"d","eventId":"\#($0)"}"# }
        let ppe = ppeIds.map {
            #"{"name":"AppLaunch","appId":"com.contoso.crash","deviceId":"d","eventId":"\#($0)","settings":{"MAMTelemetryUsePPE":true}}"#
        }
        // Interleaved, as a relay batching several apps would send them.
        return Array([prod[0], ppe[0], prod[1], ppe[1], prod[2]].joined(separator: "\n").utf8)
    }

    /// Starts a daemon armed to die at `point`, stores one prod-only request (which never
    /// reaches a cross-environment point), then posts the mixed request and waits for the
    /// daemon to kill itself; restarts it unarmed.
    static func crash(at point: String) async throws -> DaemonProcess {
        let d = try DaemonProcess(environment: ["MAMTELEMETRYD_TEST_CRASH_AT": point])
        try await d.start()
        let before = try await d.post(
            "/v1/telemetry", body: Array(#"{"name":"AppLaunch","appId":"com.contoso.crash","deviceId":"d","eventId":"before"}"#.utf8))
        #expect(before.0 == 200)
        let answer = try? await d.post("/v1/telemetry", body: mixedBody)
        #expect(answer == nil, "the daemon answered \(answer.map { "\($0.0)" } ?? "") instead of dying at \(point)")
        let p = try #require(d.process)
        let deadline = Date().addingTimeInterval(20)
        while p.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!p.isRunning)
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGKILL, "exit \(p.terminationStatus)")
        d.environment = [:]
        try await d.start()
        return d
    }

    static func eventIds(_ d: DaemonProcess, env: String) async throws -> [String] {
        try await d.allEvents(env: env, extra: "&app=com.contoso.crash").compactMap { $0["eventId"] as? String }.sorted()
    }

    @Test func aCrashBeforeTheCommitPointLeavesNothingOfTheRequest() async throws {
        let d = try await Self.crash(at: "after-staging")
        defer { d.cleanUp() }
        #expect(try await Self.eventIds(d, env: "prod") == ["before"])
        #expect(try await Self.eventIds(d, env: "ppe") == [])
        // The client never got an answer and retries: stored whole, nothing taken for a duplicate.
        let (status, body, _) = try await d.post("/v1/telemetry", body: Self.mixedBody)
        let answer = parseJSON(body)
        #expect(status == 200 && answer["accepted"] as? Int == 5, "\(answer)")
        #expect((answer["dropped"] as? [String: Int])?["duplicate"] == 0)
        #expect(try await Self.eventIds(d, env: "prod") == (["before"] + Self.prodIds).sorted())
        #expect(try await Self.eventIds(d, env: "ppe") == Self.ppeIds)
    }

    @Test func aCrashAfterTheCommitPointKeepsTheWholeRequest() async throws {
        let d = try await Self.crash(at: "after-decision")
        defer { d.cleanUp() }
        #expect(try await Self.eventIds(d, env: "prod") == (["before"] + Self.prodIds).sorted())
        #expect(try await Self.eventIds(d, env: "ppe") == Self.ppeIds)
        let log = (try? String(contentsOf: d.logFile, encoding: .utf8)) ?? ""
        #expect(log.contains("published the records of a cross-environment commit"), "\(log.suffix(2000))")
        // The client's retry is recognised: nothing is stored twice.
        let (status, body, _) = try await d.post("/v1/telemetry", body: Self.mixedBody)
        let answer = parseJSON(body)
        #expect(status == 200 && answer["accepted"] as? Int == 0 && (answer["dropped"] as? [String: Int])?["duplicate"] == 5, "\(answer)")
        #expect(try await Self.eventIds(d, env: "prod").count == 4)
    }

    /// An OTLP export with a log record and an AppLaunch event (one commit for both kinds).
    static var otlpExport: [UInt8] {
        func attribute(_ key: String, _ value: String) -> String { #"{"key":"\#(key)","value":{"stringValue":"\#(value)"}}"# }
        let log =
            #"{"timeUnixNano":"1795256130123000000","severityNumber":17,"body":{"stringValue":"crash probe"},"attributes":[\#(attribute("log.record.uid", "k-log"))]}"#
        let event =
            #"{"timeUnixNano":"1795256130124000000","eventName":"AppLaunch","attributes":[\#(attribute("log.record.uid", "k-event"))]}"#
        let resource = #"{"attributes":[\#(attribute("service.name", "com.contoso.kinds")),\#(attribute("device.id", "d"))]}"#
        return Array(#"{"resourceLogs":[{"resource":\#(resource),"scopeLogs":[{"logRecords":[\#(log),\#(event)]}]}]}"#.utf8)
    }

    /// `kill -9` inside the transaction, after an OTLP export's first kind is written and
    /// before its second: after restart neither kind is there, and the resend stores both.
    @Test func aCrashBetweenAnExportsKindsLeavesNeither() async throws {
        let d = try DaemonProcess(environment: ["MAMTELEMETRYD_TEST_CRASH_AT": "between-kinds"])
        defer { d.cleanUp() }
        try await d.start()
        let answer = try? await d.post("/v1/logs", body: Self.otlpExport, headers: [("Content-Type", "application/json")])
        #expect(answer == nil, "the daemon answered \(answer.map { "\($0.0)" } ?? "") instead of dying between the kinds")
        let p = try #require(d.process)
        let deadline = Date().addingTimeInterval(20)
        while p.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGKILL, "exit \(p.terminationStatus)")
        d.environment = [:]
        try await d.start()

        func stored() async throws -> [Int] {
            let logs = try await d.json("/v1/logs?env=prod&limit=100&app=com.contoso.kinds")["logs"] as? [Any] ?? []
            let events = try await d.allEvents(extra: "&app=com.contoso.kinds")
            return [logs.count, events.count]
        }
        #expect(try await stored() == [0, 0])
        let (status, body, _) = try await d.post("/v1/logs", body: Self.otlpExport, headers: [("Content-Type", "application/json")])
        #expect(status == 200, "\(String(decoding: body, as: UTF8.self))")
        #expect(try await stored() == [1, 1])
    }
}

/// `kill -9` while the compactor merges batches into a segment: inside its transaction
/// (after the batches are deleted, before the segment is inserted) and right after it
/// commits. After restart every acknowledged record is there exactly once, pages read the
/// same as before compaction, and the store holds the old batches or the segment, never both
/// or neither. The daemon stops itself at the point through `MAMTELEMETRYD_TEST_CRASH_AT`.
@Suite(.serialized) struct CompactionCrashTests {
    static let crashVariable = "MAMTELEMETRYD_TEST_CRASH_AT"
    static let noCompaction = ["--store-compact-after-seconds", "31536000"]
    static let compactAtOnce = ["--store-compact-after-seconds", "0", "--store-open-run-wait-seconds", "0"]

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
