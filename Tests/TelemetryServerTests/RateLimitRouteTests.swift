import Foundation
import HTTPTypes
import TestSupport
import Testing

@testable import TelemetryServer

/// Per-token ingest rate limits through the router: a token over its budget gets 429 +
/// Retry-After naming the limit, other tokens are unaffected, and the budget refills with
/// the (injected) clock.
@Suite struct RateLimitRouteTests {
    @Test func aTokenOverItsBudgetIsToldToRetryLater() async throws {
        let clock = ManualClock()
        let fiftyPerSecond: @Sendable (inout ServerConfiguration) -> Void = { $0.perTokenRecordsPerSecond = 50 }
        try await IngestHarness.run(clock: clock, adjust: fiftyPerSecond) { h in
            let relay = try await h.ingestToken(boundTo: [])
            let other = try await h.ingestToken(boundTo: [])
            func post(_ token: String, _ n: Int, tag: String) async throws -> IngestHarness.Answer {
                let body = (0..<n).map { #"{"name":"AppLaunch","appId":"com.rate","eventId":"\#(tag)-\#($0)"}"# }
                return try await h.post("/v1/telemetry", body.joined(separator: "\n"), token: token)
            }
            // The burst is two seconds' worth (100 records): the first 100 pass, the next is refused.
            let burst = try await post(relay, 100, tag: "a")
            #expect(burst.status == .ok)
            let refused = try await post(relay, 50, tag: "b")
            #expect(refused.status == .tooManyRequests)
            #expect(refused.body.contains("perTokenRecordsPerSecond=50"), "\(refused.body)")
            #expect(Int(refused.headers[HTTPField.Name("Retry-After")!] ?? "") ?? 0 >= 1)
            // Another token has its own budget.
            let own = try await post(other, 50, tag: "c")
            #expect(own.status == .ok)
            // Not yet refilled: 0.9 s is 45 records.
            clock.advance(.milliseconds(900))
            let early = try await post(relay, 50, tag: "e")
            #expect(early.status == .tooManyRequests)
            // The budget refills.
            clock.advance(.milliseconds(300))
            let refilled = try await post(relay, 50, tag: "d")
            #expect(refilled.status == .ok)
            // Refused records were not stored; the others were.
            #expect(try await h.records("events", "app=com.rate").count == 200)
        }
    }
}
