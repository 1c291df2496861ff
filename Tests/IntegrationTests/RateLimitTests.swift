import Foundation
import TestSupport
import Testing

/// Per-token ingest rate limits: a token over its budget gets 429 + Retry-After naming the
/// limit, other tokens are unaffected, and the budget refills.
@Suite(.serialized) struct RateLimitTests {
    @Test func aTokenOverItsBudgetIsToldToRetryLater() async throws {
        let d = try DaemonProcess(extraArguments: ["--limits-per-token-records-per-second", "50"])
        try await d.start()
        defer { d.cleanUp() }
        func token(_ name: String) async throws -> String {
            let (status, body, _) = try await d.post("/v1/tokens", body: Array(#"{"name":"\#(name)","scopes":["ingest"]}"#.utf8))
            #expect(status == 201)
            return parseJSON(body)["token"] as? String ?? ""
        }
        let relay = try await token("relay")
        let other = try await token("other")
        func post(_ token: String, _ n: Int, tag: String) async throws -> (Int, String, String?) {
            let body = (0..<n).map { #"{"name":"AppLaunch","appId":"com.rate","eventId":"\#(tag)-\#($0)"}"# }.joined(separator: "\n")
            let (status, answer, headers) = try await d.post(
                "/v1/telemetry", body: Array(body.utf8), headers: [("Authorization", "Bearer \(token)")])
            return (status, String(decoding: answer, as: UTF8.self), headers.first(name: "Retry-After"))
        }
        // The burst is two seconds' worth (100 records): the first 100 pass, the next is refused.
        #expect(try await post(relay, 100, tag: "a").0 == 200)
        let (status, message, retryAfter) = try await post(relay, 50, tag: "b")
        #expect(status == 429)
        #expect(message.contains("perTokenRecordsPerSecond=50"))
        #expect(Int(retryAfter ?? "") ?? 0 >= 1)
        // Another token has its own budget.
        #expect(try await post(other, 50, tag: "c").0 == 200)
        // The budget refills.
        try await Task.sleep(for: .seconds(1.2))
        #expect(try await post(relay, 50, tag: "d").0 == 200)
        // Refused records were not stored; the others were.
        #expect(try await d.allEvents(extra: "&app=com.rate").count == 200)
    }
}
