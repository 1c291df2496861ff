import Compression
import Foundation
import TestSupport
import Testing

@testable import TelemetryServer

/// Ingest and query through the daemon's router over a real store (issue 2): every encoding
/// and framing, refusals, retries and the query filters, cursors and formats.
@Suite(.serialized) struct IngestRoundTripRouteTests {
    static func events(_ tag: String, count: Int) -> [String] {
        (0..<count).map { i in
            #"{"name":"EnrollmentCall","appId":"com.contoso.\#(tag)","deviceId":"dev-\#(i % 3)","identity":"Jane.Doe@Contoso.com","sessionId":"s1","eventId":"\#(tag)-\#(i)","time":"2026-11-21T10:00:\#(String(format: "%02d", i % 60)).000Z","data":{"operation":"enroll","statusCode":\#(i % 2 == 0 ? 100 : 203),"durationMs":\#(100 + i)}}"#
        }
    }

    @Test func everyEncodingAndFramingRoundTrips() async throws {
        try await IngestHarness.run { (d: IngestHarness) async throws in
            var expected = 0
            for (encoding, format) in [("identity", nil), ("gzip", ZlibFormat.gzip), ("deflate", .zlib), ("deflate", .raw)]
                as [(String, ZlibFormat?)]
            {
                for framing in ["ndjson", "array"] {
                    let tag = "\(encoding)\(format.map { "-\($0.rawValue)" } ?? "")-\(framing)"
                    let lines = Self.events(tag, count: 5)
                    let plain = Array(
                        (framing == "ndjson" ? lines.joined(separator: "\n") : "[\n" + lines.joined(separator: ",\n") + "\n]").utf8)
                    let body = try format.map { try Deflate.compress(plain, format: $0) } ?? plain
                    let contentType = framing == "ndjson" ? "application/x-ndjson" : "application/json"
                    let (status, answer, _) = try await d.exchange(
                        "/v1/telemetry", bytes: body, headers: [("Content-Type", contentType), ("Content-Encoding", encoding)])
                    #expect(status == 200, "\(tag): \(String(decoding: answer, as: UTF8.self))")
                    let json = parseJSON(answer)
                    #expect(json["accepted"] as? Int == 5, "\(tag)")
                    #expect((json["env"] as? [String: Int])?["prod"] == 5)
                    #expect(json["serverTime"] is String)
                    expected += 5
                    let back = try await d.allEvents(extra: "&app=com.contoso.\(tag)")
                    #expect(back.count == 5, "\(tag)")
                    #expect(back.allSatisfy { $0["statusName"] != nil && $0["id"] != nil && $0["receivedAt"] != nil })
                }
            }
            #expect(try await d.allEvents().count == expected)
        }
    }

    @Test func badBodiesAreRefusedClearlyAndGoodLinesKept() async throws {
        try await IngestHarness.run { (d: IngestHarness) async throws in
            // Mixed valid and invalid lines: 200, invalid lines named.
            let mixed = Self.events("mixed", count: 2) + ["{not json", #"{"appId":"x"}"#]
            let (s1, b1, _) = try await d.exchange("/v1/telemetry", bytes: Array(mixed.joined(separator: "\n").utf8))
            #expect(s1 == 200)
            let rejected = parseJSON(b1)["rejected"] as? [[String: Any]] ?? []
            #expect(rejected.map { $0["line"] as? Int } == [3, 4])
            #expect((rejected[1]["error"] as? String) == "name is required")
            // Garbage: 400 with every line's reason.
            let (s2, b2, _) = try await d.exchange("/v1/telemetry", bytes: Array("garbage\nmore garbage".utf8))
            #expect(s2 == 400)
            #expect((parseJSON(b2)["error"] as? [String: Any])?["code"] as? String == "no_valid_records")
            // Truncated deflate: 400 that says so.
            let full = try Deflate.compress(Array(Self.events("t", count: 50).joined(separator: "\n").utf8), format: .raw)
            let (s3, b3, _) = try await d.exchange(
                "/v1/telemetry", bytes: Array(full.prefix(full.count / 2)), headers: [("Content-Encoding", "deflate")])
            #expect(s3 == 400)
            #expect(String(decoding: b3, as: UTF8.self).contains("truncated"))
            // Empty body.
            let (s4, _, _) = try await d.exchange("/v1/telemetry", bytes: [])
            #expect(s4 == 400)
            // Unknown event names are accepted and queryable by name.
            let (s5, _, _) = try await d.exchange("/v1/telemetry", bytes: Array(#"{"name":"FutureThing","appId":"com.f"}"#.utf8))
            #expect(s5 == 200)
            #expect(try await d.allEvents(extra: "&name=FutureThing").count == 1)
            // Nothing valid was lost along the way.
            #expect(try await d.allEvents(extra: "&app=com.contoso.mixed").count == 2)
        }
    }

    @Test func retriesWithEventIdsDoNotDuplicate() async throws {
        try await IngestHarness.run { (d: IngestHarness) async throws in
            let body = Array(Self.events("retry", count: 10).joined(separator: "\n").utf8)
            let (_, first, _) = try await d.exchange("/v1/telemetry", bytes: body)
            let (_, second, _) = try await d.exchange("/v1/telemetry", bytes: body)
            #expect(parseJSON(first)["accepted"] as? Int == 10)
            #expect(parseJSON(second)["accepted"] as? Int == 0)
            #expect((parseJSON(second)["dropped"] as? [String: Int])?["duplicate"] == 10)
            #expect(try await d.allEvents().count == 10)
        }
    }

    @Test func queryFiltersCursorsAndFormats() async throws {
        try await IngestHarness.run { (d: IngestHarness) async throws in
            for round in 0..<4 {
                let body = Array(Self.events("q\(round)", count: 30).joined(separator: "\n").utf8)
                let (s, _, _) = try await d.exchange("/v1/telemetry", bytes: body)
                #expect(s == 200)
            }
            #expect(try await d.allEvents(extra: "&identity=JANE.DOE@contoso.COM").count == 120)
            #expect(try await d.allEvents(extra: "&device=dev-1").count == 40)
            #expect(try await d.allEvents(extra: "&statusCode=203").count == 60)
            #expect(try await d.allEvents(extra: "&since=2026-11-21T10:00:10Z&until=2026-11-21T10:00:19.999Z").count == 40)
            #expect(try await d.allEvents(extra: "&contains=Q2-1").count == 11)
            // Small pages across batch (request) boundaries, newest first.
            var ids: [Int] = []
            var cursor: String?
            repeat {
                let page = try await d.get("/v1/events?limit=7&device=dev-0" + (cursor.map { "&cursor=\($0)" } ?? ""))
                ids += (page["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
                cursor = page["nextCursor"] as? String
            } while cursor != nil
            #expect(ids.count == 40)
            #expect(ids == ids.sorted(by: >))
            // NDJSON on request.
            let (status, body, _) = try await d.exchange("/v1/events?limit=5", method: .get, headers: [("Accept", "application/x-ndjson")])
            #expect(status == 200)
            let lines = String(decoding: body, as: UTF8.self).split(separator: "\n")
            #expect(lines.count == 5)
            #expect(lines.allSatisfy { $0.contains("\"statusName\":") })
            // Bad parameters are named.
            let (bad, badBody, _) = try await d.exchange("/v1/events?since=yesterday", method: .get)
            #expect(bad == 400)
            #expect(String(decoding: badBody, as: UTF8.self).contains("since"))
        }
    }
}
