import AsyncHTTPClient
import Foundation
import NIOCore
import TestSupport
import Testing

/// `GET /v1/logs?follow=true` (issue 3, SPEC §3): like `journalctl -f`, a record posted
/// after the stream opened arrives within seconds, a record that does not match never does,
/// a client that goes away leaves the daemon healthy and a graceful stop ends the stream —
/// over NDJSON, server-sent events and `mamtelemetryctl logs -f`. That filters apply to the
/// live tail is checked in process (TelemetryServerTests.FollowFilterRouteTests).
@Suite(.serialized) struct FollowTests {
    @Test func ndjsonFollowDeliversNewMatchesOnly() async throws {
        try await Self.follow(serverSentEvents: false)
    }

    @Test func serverSentEventsFollowDeliversNewMatchesOnly() async throws {
        try await Self.follow(serverSentEvents: true)
    }

    /// Opens a follow stream for one device, checks the backlog, then posts a record for
    /// another device and one for the followed device, and disconnects.
    static func follow(serverSentEvents: Bool) async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let device = "follow-\(UUID().uuidString)"
        let other = "other-\(UUID().uuidString)"
        // A backlog record: once it is on the stream, the stream is subscribed to commits.
        #expect(try await d.ingestLogs(Self.record("backlog", device: device)).0 == 200)

        let stream = try await FollowClient.open(d, query: "follow=true&device=\(device)", serverSentEvents: serverSentEvents)
        #expect(stream.contentType == (serverSentEvents ? "text/event-stream" : "application/x-ndjson"))
        #expect(try await stream.waitFor(message: "backlog"))

        #expect(try await d.ingestLogs(Self.record("not for this stream", device: other)).0 == 200)
        let posted = ContinuousClock.now
        #expect(try await d.ingestLogs(Self.record("live match", device: device, level: "error")).0 == 200)
        #expect(try await stream.waitFor(message: "live match", timeout: .seconds(5)))
        #expect(ContinuousClock.now - posted < .seconds(5))
        // Records are streamed in commit order: the other device's came first, so had it
        // matched it would be here by now.
        let records = stream.records
        #expect(records.compactMap { $0["message"] as? String } == ["backlog", "live match"])
        #expect(records.allSatisfy { $0["deviceId"] as? String == device })
        #expect(records.last?["level"] as? String == "error")
        #expect(records.last?["id"] is Int && records.last?["receivedAt"] is String)
        if serverSentEvents {
            // `id:` carries the record id, `event:` the kind (like journal-gatewayd's cursor).
            let raw = stream.rawText
            let id = try #require(records.last?["id"] as? Int)
            #expect(raw.contains("id: \(id)\nevent: log\ndata: {"), "\(raw)")
        }

        // The client goes away; a record posted after that is written to a dead socket.
        try await stream.close()
        #expect(try await d.ingestLogs(Self.record("after disconnect", device: device)).0 == 200)
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await d.get("/healthz").0 == 200)
        #expect(try await d.get("/readyz").0 == 200)

        // A new follow works and starts from the backlog, newest last.
        let again = try await FollowClient.open(d, query: "follow=true&device=\(device)&limit=2", serverSentEvents: serverSentEvents)
        #expect(try await again.waitFor(message: "after disconnect"))
        #expect(again.records.compactMap { $0["message"] as? String } == ["live match", "after disconnect"])
        #expect(try await d.ingestLogs(Self.record("second stream", device: device)).0 == 200)
        #expect(try await again.waitFor(message: "second stream", timeout: .seconds(5)))

        // A graceful stop ends an open follow stream instead of waiting for the client.
        let stopped = ContinuousClock.now
        d.stop()
        #expect(ContinuousClock.now - stopped < .seconds(10))
        #expect(d.process?.terminationStatus == 0, "\((try? String(contentsOf: d.logFile, encoding: .utf8)) ?? "")")
        #expect(try await again.waitForEnd(timeout: .seconds(5)))
        try await again.close()
    }

    @Test func controlFollowPrintsAPostedRecord() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let device = "ctl-\(UUID().uuidString)"
        #expect(try await d.ingestLogs(Self.record("already there", device: device)).0 == 200)
        let ctl = try ControlProcess(["logs", "--device", device, "-f"], daemon: d)
        defer {
            if ctl.process.isRunning {
                kill(ctl.process.processIdentifier, SIGKILL)
                ctl.process.waitUntilExit()
            }
        }
        #expect(try await ctl.waitForOutput(containing: "already there"), "\(ctl.standardOutput) \(ctl.standardError)")

        #expect(try await d.ingestLogs(Self.record("not this device", device: "someone-else")).0 == 200)
        #expect(try await d.ingestLogs(Self.record("printed live", device: device, level: "warning", component: "Sync")).0 == 200)
        #expect(try await ctl.waitForOutput(containing: "printed live", timeout: .seconds(5)), "\(ctl.standardOutput) \(ctl.standardError)")
        let line = try #require(ctl.standardOutput.split(separator: "\n").last.map(String.init))
        #expect(line.contains("WARNING") && line.contains("com.a/\(device)") && line.hasSuffix("[Sync] printed live"), "\(line)")
        #expect(!ctl.standardOutput.contains("\u{1B}["), "no colour when stdout is not a terminal")
        #expect(!ctl.standardOutput.contains("not this device"))

        kill(ctl.process.processIdentifier, SIGTERM)
        #expect(try await ctl.waitForExit(timeout: .seconds(5)) != nil, "mamtelemetryctl did not stop on SIGTERM")
        #expect(try await d.get("/healthz").0 == 200)
    }

    static func record(_ message: String, device: String, level: String = "info", component: String? = nil) -> String {
        var object: [String: Any] = ["level": level, "message": message, "appId": "com.a", "deviceId": device]
        if let component { object["component"] = component }
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}

extension FollowClient {
    /// Opens `<path>?<query>` (`/v1/logs` by default) on the daemon with `token` (its admin
    /// token by default).
    static func open(
        _ d: DaemonProcess, path: String = "/v1/logs", query: String, serverSentEvents: Bool, token: String? = nil
    ) async throws -> FollowClient {
        try await open(url: d.baseURL + path + "?" + query, token: token ?? d.adminToken ?? "", serverSentEvents: serverSentEvents)
    }
}
