import Foundation
import TestSupport
import Testing

/// Drop counts are history, not process state: after a restart (a second run of the daemon's
/// router and services on the same data directory) `/v1/stats/drops` still has them, per app
/// and reason, and honours since/until/app.
@Suite struct DropStatsTests {
    @Test func dropCountsSurviveARestartAndHonourTheWindowAndApp() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("drops-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await IngestHarness.run(directory: directory) { h in
            let events = (0..<30).map { i in
                #"{"name":"AppLaunch","appId":"\#(i % 3 == 0 ? "com.drop.b" : "com.drop.a")","deviceId":"d","eventId":"e\#(i)"}"#
            }
            let body = events.joined(separator: "\n")
            let optedOut = #"{"name":"AppLaunch","appId":"com.drop.c","settings":{"MAMTelemetryDisabled":true}}"#
            // All 30, then all 30 again (duplicates), then a broken line and an opted-out event.
            for request in [body, body, "{broken\n\(optedOut)"] {
                let answer = try await h.post("/v1/telemetry", request)
                #expect(answer.status == .ok, "\(answer.body)")
            }
        }

        try await IngestHarness.run(directory: directory) { h in
            let all = try await h.get("/v1/stats/drops?since=-1h")
            #expect(all["dropped"] as? [String: Int] == ["duplicate": 30, "telemetryDisabled": 1], "\(all)")
            #expect(all["rejected"] as? [String: Int] == ["invalid": 1], "\(all)")
            let byApp = all["droppedByApp"] as? [String: [String: Int]] ?? [:]
            #expect(byApp == ["com.drop.a": ["duplicate": 20], "com.drop.b": ["duplicate": 10], "com.drop.c": ["telemetryDisabled": 1]])

            let onlyB = try await h.get("/v1/stats/drops?since=-1h&app=com.drop.b")
            #expect(onlyB["dropped"] as? [String: Int] == ["duplicate": 10], "\(onlyB)")
            let before = try await h.get("/v1/stats/drops?since=-1d&until=-2h")
            #expect(before["dropped"] as? [String: Int] == [:], "\(before)")
            let future = try await h.get("/v1/stats/drops?since=2099-01-01T00:00:00Z&until=2099-01-02T00:00:00Z")
            #expect(future["dropped"] as? [String: Int] == [:])
        }
    }
}
