import Foundation
import TestSupport
import Testing

@testable import TelemetryServer

/// `GET /v1/logs?follow=true` like `journalctl -f` (issue 3, SPEC §3), over NDJSON and
/// server-sent events: the backlog first, then a record posted after the stream opened
/// arrives within seconds and one that does not match never does; a client that goes away
/// leaves the server healthy, and a new stream starts from the backlog. In process, on a live
/// listener; how a graceful stop ends a stream and `mamtelemetryctl logs -f` are
/// IntegrationTests.FollowTests.
@Suite struct FollowStreamRouteTests {
    @Test(arguments: [false, true])
    func aFollowDeliversNewMatchesOnly(serverSentEvents: Bool) async throws {
        try await IngestHarness.run(live: true) { d in
            let port = try #require(d.client.port)
            func follow(_ query: String) async throws -> FollowClient {
                try await FollowClient.open(
                    url: "http://127.0.0.1:\(port)/v1/logs?\(query)", token: d.adminToken, serverSentEvents: serverSentEvents)
            }
            func record(_ message: String, device: String, level: String = "info") -> String {
                FollowFilterRouteTests.record(message, device: device, level: level)
            }
            let device = "follow-\(UUID().uuidString)"
            let other = "other-\(UUID().uuidString)"
            // A backlog record: once it is on the stream, the stream is subscribed to commits.
            #expect(try await d.ingestLogs(record("backlog", device: device)).0 == 200)

            let stream = try await follow("follow=true&device=\(device)")
            #expect(stream.contentType == (serverSentEvents ? "text/event-stream" : "application/x-ndjson"))
            #expect(try await stream.waitFor(message: "backlog"))

            #expect(try await d.ingestLogs(record("not for this stream", device: other)).0 == 200)
            #expect(try await d.ingestLogs(record("live match", device: device, level: "error")).0 == 200)
            #expect(try await stream.waitFor(message: "live match", timeout: .seconds(5)))
            // Records are streamed in commit order: the other device's came first, so had it
            // matched it would be here by now.
            let records = stream.records
            #expect(records.compactMap { $0["message"] as? String } == ["backlog", "live match"])
            #expect(records.allSatisfy { $0["deviceId"] as? String == device })
            #expect(records.last?["level"] as? String == "error")
            #expect(records.last?["id"] is Int && records.last?["receivedAt"] is String)
            if serverSentEvents {
                // `id:` carries the record id, `event:` the kind (like journal-gatewayd's cursor).
                let raw = stream.rawText
                let id = try #require(records.last?["id"] as? Int)
                #expect(raw.contains("id: \(id)\nevent: log\ndata: {"), "\(raw)")
            }

            // The client goes away; the record posted next is written to a dead socket.
            try await stream.close()
            #expect(try await d.ingestLogs(record("after disconnect", device: device)).0 == 200)

            // A new follow works and starts from the backlog, newest last.
            let again = try await follow("follow=true&device=\(device)&limit=2")
            #expect(try await again.waitFor(message: "after disconnect"))
            #expect(again.records.compactMap { $0["message"] as? String } == ["live match", "after disconnect"])
            #expect(try await d.ingestLogs(record("second stream", device: device)).0 == 200)
            #expect(try await again.waitFor(message: "second stream", timeout: .seconds(5)))
            // Two commits have been offered to the dead stream by now, with no sleep to wait for them.
            #expect(try await d.exchange("/healthz", method: .get).0 == 200)
            #expect(try await d.exchange("/readyz", method: .get).0 == 200)
            try await again.close()
        }
    }
}
