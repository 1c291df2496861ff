import Foundation
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// The per-app series behind the domain alerts: counted for every stored event, with an `app`
/// label that stays bounded and never carries what is not a bundle id, whatever apps send.
@Suite struct AppMetricsTests {
    /// `name{labels} value` lines of `/metrics` for one family, as (labels, value).
    static func samples(_ text: String, _ family: MetricName) -> [([String: String], Double)] {
        text.split(separator: "\n").compactMap { line -> ([String: String], Double)? in
            guard line.hasPrefix(family.rawValue + "{"), let close = line.lastIndex(of: "}") else { return nil }
            let body = line[line.index(line.startIndex, offsetBy: family.rawValue.count + 1)..<close]
            var labels: [String: String] = [:]
            for pair in body.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { labels[String(parts[0])] = String(parts[1].dropFirst().dropLast()) }
            }
            return (labels, Double(line[line.index(after: close)...].trimmingCharacters(in: .whitespaces)) ?? .nan)
        }
    }

    @Test func appLabelsStayBoundedAndCountEveryStoredEvent() async throws {
        try await IngestHarness.run { h in
            var random = SeededRandom(seed: 0xA99)
            _ = try await h.components.registry.register(appId: "com.contoso.registered", flags: AppFlags(), source: "api", now: 0)
            var expectedFailed = 0
            var expectedLaunches = 0
            var lines: [String] = []
            for i in 0..<400 {
                let app = random.pick([
                    "com.contoso.app\(random.below(40))", "com.contoso.registered", "jane@contoso.com", "Has Spaces \(i)", "x",
                ])
                if random.below(3) == 0 {
                    lines.append(#"{"name":"AppLaunch","appId":"\#(app)","deviceId":"d\#(i)"}"#)
                    expectedLaunches += 1
                } else {
                    let code = random.pick([100, 200, 225, 299])
                    if code >= 200 { expectedFailed += 1 }
                    lines.append(
                        #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"d\#(i)","data":{"operation":"enroll","statusCode":\#(code)}}"#
                    )
                }
                // The registered app arrives late, past the cap: it is still named.
                if i == 399 { lines.append(#"{"name":"AppLaunch","appId":"com.contoso.registered","deviceId":"late"}"#) }
            }
            expectedLaunches += 1
            #expect(try await h.post("/v1/telemetry", lines.joined(separator: "\n")).status == .ok)
            let text = try await h.client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(h.adminToken)"]) {
                String(buffer: $0.body)
            }
            let families: [MetricName] = [.appEnrollmentCalls, .appEnrollmentFailures, .appLaunchesByApp]
            var named = Set<String>()
            for family in families {
                for (labels, _) in Self.samples(text, family) {
                    let app = try #require(labels["app"])
                    #expect(app == "other" || app == "com.contoso.registered" || AppMetrics.looksLikeBundleID(app), "\(family): \(app)")
                    #expect(!app.contains("@") && !app.contains(" "))
                    if app != "other" && app != "com.contoso.registered" { named.insert(app) }
                }
            }
            #expect(named.count == AppMetrics.otherAppsLimit, "\(named.sorted())")
            #expect(Self.samples(text, .appLaunchesByApp).contains { $0.0["app"] == "com.contoso.registered" })
            #expect(Self.samples(text, .appEnrollmentFailures).map(\.1).reduce(0, +) == Double(expectedFailed))
            #expect(Self.samples(text, .appLaunchesByApp).map(\.1).reduce(0, +) == Double(expectedLaunches))
            let failedCalls = Self.samples(text, .appEnrollmentCalls).filter { $0.0["outcome"] == "failed" }.map(\.1).reduce(0, +)
            #expect(failedCalls == Double(expectedFailed))
            #expect(Self.samples(text, .appEnrollmentFailures).allSatisfy { ["200", "225", "other"].contains($0.0["status_code"] ?? "") })
        }
    }
}
