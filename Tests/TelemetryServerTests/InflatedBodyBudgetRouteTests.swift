import AsyncHTTPClient
import Compression
import Foundation
import HTTPTypes
import NIOCore
import TestSupport
import Testing

@testable import TelemetryServer

/// Decompressed bytes count against `maxInFlightBytes` as they are produced (issue 11 item
/// 12): past the budget mid-inflate a body is refused with 503, `Retry-After` and the
/// limit's name, and nothing of it is stored. In process, on a live listener (the slow
/// upload streams); the memory of many such bodies at once is IntegrationTests.InflatedBodyBudgetTests.
@Suite struct InflatedBodyBudgetRouteTests {
    static func body(_ tag: String, bytes: Int) -> (ids: [String], ndjson: [UInt8]) { InflatingBodies.ndjson(tag, bytes: bytes) }

    static func gzipped(_ tag: String, bytes: Int) throws -> (ids: [String], wire: [UInt8]) {
        let (ids, ndjson) = body(tag, bytes: bytes)
        return (ids, try Deflate.compress(ndjson, level: 9, format: .gzip))
    }

    static func storedIds(_ d: IngestHarness) async throws -> Set<String> {
        Set(try await d.allEvents(extra: "&app=com.contoso.inflate").compactMap { $0["eventId"] as? String })
    }

    /// The in-flight gauge, read from `/metrics`.
    static func inFlight(_ d: IngestHarness) async throws -> Int {
        let (_, exposition, _) = try await d.exchange("/metrics", method: .get)
        for line in String(decoding: exposition, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("mamtelemetry_ingest_inflight_bytes ") {
            return Int(Double(line.split(separator: " ").last ?? "") ?? 0)
        }
        return 0
    }

    /// A 6 MiB upload holds its place while its body trickles in; a 30 KB gzip body that
    /// inflates to 6 MiB fits by wire size but not by what it becomes, so it is refused
    /// mid-inflate. Once the slow upload is done, the same body is stored.
    @Test func aBodyIsRefusedWhenItsInflatedBytesPassTheBudget() async throws {
        let budget: @Sendable (inout ServerConfiguration) -> Void = { c in
            c.maxInFlightBytes = 8 << 20
            c.inflateLimits.maxOutputBytes = 16 << 20
            c.inflateLimits.maxRatio = 5000
        }
        try await IngestHarness.run(live: true, adjust: budget) { d in
            let token = d.adminToken
            let port = try #require(d.client.port)
            let (slowIds, slowBody) = Self.body("slow", bytes: 6 << 20)
            let (chunks, feed) = AsyncStream<ByteBuffer>.makeStream()
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/telemetry")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Content-Type", value: "application/x-ndjson")
            request.body = .stream(chunks, length: .known(Int64(slowBody.count)))
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            let slow = Task { () -> (Int, [UInt8]) in
                let response = try await client.execute(request, timeout: .seconds(60))
                return (Int(response.status.code), [UInt8](buffer: try await response.body.collect(upTo: 1 << 20)))
            }
            feed.yield(ByteBuffer(bytes: slowBody.prefix(1024)))
            // Wait (bounded) until the daemon has admitted the slow upload and reserved its size.
            let deadline = ContinuousClock.now + .seconds(20)
            while try await Self.inFlight(d) < slowBody.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await Self.inFlight(d) >= slowBody.count)

            let (bombIds, bomb) = try Self.gzipped("bomb", bytes: 6 << 20)
            #expect(bomb.count < 64 << 10 && bomb.count + slowBody.count < 8 << 20, "the body must fit the budget by its wire size")
            let (status, answer, headers) = try await d.exchange("/v1/telemetry", bytes: bomb, headers: [("Content-Encoding", "gzip")])
            let message = (parseJSON(answer)["error"] as? [String: Any])?["message"] as? String ?? String(decoding: answer, as: UTF8.self)
            #expect(status == 503, "\(status): \(message)")
            #expect(headers[HTTPField.Name("Retry-After")!] != nil)
            #expect(message.contains("maxInFlightBytes=\(8 << 20)"), "\(message)")

            feed.yield(ByteBuffer(bytes: slowBody.dropFirst(1024)))
            feed.finish()
            let (slowStatus, slowAnswer) = try await slow.value
            try await client.shutdown()
            #expect(slowStatus == 200 && parseJSON(slowAnswer)["accepted"] as? Int == slowIds.count, "\(slowStatus)")
            #expect(try await Self.storedIds(d) == Set(slowIds), "nothing of the refused body is stored")

            // Alone (so the oldest in flight), the same body is admitted: the oldest may always grow.
            let (again, againAnswer, _) = try await d.exchange("/v1/telemetry", bytes: bomb, headers: [("Content-Encoding", "gzip")])
            #expect(again == 200 && parseJSON(againAnswer)["accepted"] as? Int == bombIds.count)
            #expect(try await Self.inFlight(d) == 0, "every reservation is given back")
        }
    }
}
