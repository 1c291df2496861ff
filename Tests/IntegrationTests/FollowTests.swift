import AsyncHTTPClient
import Foundation
import NIOCore
import TestSupport
import Testing

/// How a follow stream (`GET /v1/logs?follow=true`, issue 3, SPEC §3) meets the process: a
/// graceful stop (SIGTERM) ends every open stream, NDJSON and server-sent events, instead of
/// waiting for the clients, and `mamtelemetryctl logs -f` prints a posted record and stops on
/// SIGTERM. What a stream delivers is checked in process
/// (TelemetryServerTests.FollowStreamRouteTests, FollowFilterRouteTests).
@Suite(.serialized) struct FollowTests {
    @Test func aGracefulStopEndsOpenStreams() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let device = "follow-\(UUID().uuidString)"
        #expect(try await d.ingestLogs(Self.record("backlog", device: device)).0 == 200)
        let ndjson = try await FollowClient.open(d, query: "follow=true&device=\(device)", serverSentEvents: false)
        let events = try await FollowClient.open(d, query: "follow=true&device=\(device)", serverSentEvents: true)
        #expect(try await ndjson.waitFor(message: "backlog"))
        #expect(try await events.waitFor(message: "backlog"))

        let stopped = ContinuousClock.now
        d.stop()
        #expect(ContinuousClock.now - stopped < .seconds(10))
        #expect(d.process?.terminationStatus == 0, "\((try? String(contentsOf: d.logFile, encoding: .utf8)) ?? "")")
        #expect(try await ndjson.waitForEnd(timeout: .seconds(5)))
        #expect(try await events.waitForEnd(timeout: .seconds(5)))
        try await ndjson.close()
        try await events.close()
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
