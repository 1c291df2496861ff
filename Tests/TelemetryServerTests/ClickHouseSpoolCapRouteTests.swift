import Foundation
import HTTPTypes
import TestSupport
import Testing

@testable import TelemetryServer

/// The ClickHouse backend while ClickHouse is down: ingest keeps acknowledging into the spool
/// until it holds `clickhouse.spoolMaxBytes`, then answers 503 naming the limit with
/// `Retry-After`, and readiness names the outage. In process, with the forwarder pointed at
/// a port nothing listens on (no ClickHouse server needed); forwarding to a real one is
/// IntegrationTests.ClickHouseForwardingTests.
@Suite struct ClickHouseSpoolCapRouteTests {
    /// The ClickHouse backend with a 1 MiB spool, forwarding to a port nothing listens on:
    /// every attempt is "unreachable".
    static func clickHouseDown(_ c: inout ServerConfiguration) {
        c.backend = .clickhouse
        c.clickhouse.urls = [URL(string: "http://127.0.0.1:9")!]
        c.clickhouse.database = "down"
        c.clickhouse.collectorID = 7
        c.clickhouse.spoolMaxBytes = 1_048_576
    }

    @Test func ingestKeepsAcknowledgingWhileClickHouseIsDownThenAnswers503AtTheSpoolCap() async throws {
        try await IngestHarness.run(adjust: Self.clickHouseDown) { h in
            var generator = SeededRandom(seed: 14)
            var refusal: IngestHarness.Answer?
            for round in 0..<200 {
                // Random text compresses badly, so the spool grows quickly.
                let lines = (0..<200).map { i in
                    let noise = (0..<40).map { _ in String(generator.next() % 1_000_000_007, radix: 36) }.joined()
                    return #"{"name":"IntuneAction","appId":"com.s","deviceId":"d\#(round)-\#(i)","data":{"n":"\#(noise)"}}"#
                }
                let answer = try await h.post("/v1/telemetry", lines.joined(separator: "\n"))
                if answer.status != .ok {
                    refusal = answer
                    break
                }
            }
            let r = try #require(refusal)
            #expect(r.status == .serviceUnavailable)
            #expect(r.errorMessage.contains("clickhouse.spoolMaxBytes=1048576"), "\(r.body)")
            #expect(r.headers[HTTPField.Name("Retry-After")!] != nil)
            // Readiness names the outage once the first attempt has failed (a refused connect is
            // retried by the HTTP client within its 3 s connect timeout), which the cap need not wait for.
            var detail = ""
            for _ in 0..<50 where !detail.contains("backend unreachable (unreachable)") {
                detail = String(decoding: try await h.exchange("/readyz", method: .get).1, as: UTF8.self)
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(detail.contains("backend unreachable (unreachable)"), "\(detail)")
        }
    }
}
