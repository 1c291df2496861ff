import Foundation
import TestSupport
import Testing

/// Drop counts are history, not process state: after a restart `/v1/stats/drops` still
/// has them, per app and reason, and honours since/until/app.
@Suite(.serialized) struct DropStatsTests {
    @Test func dropCountsSurviveARestartAndHonourTheWindowAndApp() async throws {
        let d = try DaemonProcess()
        defer { d.cleanUp() }
        try await d.start()
        let events = (0..<30).map { i in
            #"{"name":"AppLaunch","appId":"\#(i % 3 == 0 ? "com.drop.b" : "com.drop.a")","deviceId":"d","eventId":"e\#(i)"}"#
        }
        let body = Array(events.joined(separator: "\n").utf8)
        #expect(try await d.post("/v1/telemetry", body: body).0 == 200)
        #expect(try await d.post("/v1/telemetry", body: body).0 == 200)  // all 30 again: duplicates
        let optedOut = #"{"name":"AppLaunch","appId":"com.drop.c","settings":{"MAMTelemetryDisabled":true}}"#
        #expect(try await d.post("/v1/telemetry", body: Array("{broken\n\(optedOut)".utf8)).0 == 200)

        d.stop()
        #expect(d.exitStatus == 0)
        try await d.start()

        let all = try await d.json("/v1/stats/drops?since=-1h")
        #expect(all["dropped"] as? [String: Int] == ["duplicate": 30, "telemetryDisabled": 1], "\(all)")
        #expect(all["rejected"] as? [String: Int] == ["invalid": 1], "\(all)")
        let byApp = all["droppedByApp"] as? [String: [String: Int]] ?? [:]
        #expect(byApp == ["com.drop.a": ["duplicate": 20], "com.drop.b": ["duplicate": 10], "com.drop.c": ["telemetryDisabled": 1]])

        let onlyB = try await d.json("/v1/stats/drops?since=-1h&app=com.drop.b")
        #expect(onlyB["dropped"] as? [String: Int] == ["duplicate": 10], "\(onlyB)")
        let before = try await d.json("/v1/stats/drops?since=-1d&until=-2h")
        #expect(before["dropped"] as? [String: Int] == [:], "\(before)")
        let future = try await d.json("/v1/stats/drops?since=2099-01-01T00:00:00Z&until=2099-01-02T00:00:00Z")
        #expect(future["dropped"] as? [String: Int] == [:])
        d.stop()
    }
}
