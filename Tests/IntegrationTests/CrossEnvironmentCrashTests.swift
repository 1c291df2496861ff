import Foundation
import TestSupport
import Testing

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
