import Foundation
import TestSupport
import Testing

@testable import TelemetryServer

/// `GET /v1/logs?follow=true` applies the query's filters to the live tail, not only to the
/// backlog, and never streams telemetry events. In process, on a live listener; how a
/// stream ends at a graceful stop and `mamtelemetryctl logs -f` are IntegrationTests.FollowTests.
@Suite struct FollowFilterRouteTests {
    static func record(_ message: String, device: String, level: String) -> String {
        let object: [String: Any] = ["level": level, "message": message, "appId": "com.a", "deviceId": device]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func filtersApplyToTheLiveTail() async throws {
        try await IngestHarness.run(live: true) { d in
            let device = "lvl-\(UUID().uuidString)"
            let port = try #require(d.client.port)
            let stream = try await FollowClient.open(
                url: "http://127.0.0.1:\(port)/v1/logs?follow=true&device=\(device)&level=warning", token: d.adminToken,
                serverSentEvents: false)
            let body = ["verbose", "info", "warning", "error"].map { Self.record("m-\($0)", device: device, level: $0) }
            #expect(try await d.ingestLogs(body.joined(separator: "\n")).0 == 200)
            #expect(try await stream.waitFor(message: "m-error", timeout: .seconds(5)))
            #expect(stream.records.compactMap { $0["message"] as? String } == ["m-warning", "m-error"])
            // Telemetry events never show up on a log stream.
            let event = #"{"name":"AppLaunch","appId":"com.a","deviceId":"\#(device)"}"#
            #expect(try await d.exchange("/v1/telemetry", bytes: Array(event.utf8)).0 == 200)
            #expect(try await d.ingestLogs(Self.record("m-after-event", device: device, level: "error")).0 == 200)
            #expect(try await stream.waitFor(message: "m-after-event", timeout: .seconds(5)))
            #expect(stream.records.count == 3)
            try await stream.close()
        }
    }
}
