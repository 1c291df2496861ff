import Foundation
import TestSupport
import Testing

/// A client retry (same kind, app and `eventId`) that arrives after the original was shipped
/// and left the spool is still recognised by the collector: ClickHouse holds the record once.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseRetryTests {
    @Test func aRetryAfterShippingIsNotStoredAgain() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let d = try ClickHouseForwardingTests.daemon(server.urls, database: "retry")
        try await d.start()
        defer { d.cleanUp() }
        let body = Array(#"{"name":"AppLaunch","appId":"com.r","deviceId":"d1","eventId":"retry-1"}"#.utf8)
        #expect(try await d.post("/v1/telemetry", body: body).0 == 200)
        let shipped = try await ClickHouseForwardingTests.eventually(server, "SELECT count() FROM retry.records FORMAT TSV", "1\n")
        #expect(shipped == "1\n")
        // Shipped means the batch left the spool.
        var ready = ""
        for _ in 0..<50 {
            ready = String(decoding: try await d.get("/readyz").1, as: UTF8.self)
            if ready.contains("spool 0 records") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(ready.contains("spool 0 records"), "\(ready)")
        let (status, answer, _) = try await d.post("/v1/telemetry", body: body)
        let text = String(decoding: answer, as: UTF8.self)
        #expect(status == 200)
        #expect(text.contains(#""duplicate":1"#) && text.contains(#""accepted":0"#), "\(text)")
        // Give the forwarder time to ship anything it had (it polls every 200 ms).
        try await Task.sleep(for: .seconds(1))
        #expect(try await server.query("SELECT count() FROM retry.records FORMAT TSV") == "1\n")
    }
}
