import Compression
import Foundation
import TestSupport
import Testing

@testable import TelemetryServer

/// A compressed body is taken whole or refused (issue 11 item 4): every member of a
/// concatenated gzip body is stored, and bytes after the end of a stream are a 400 that
/// names the problem, with nothing stored.
@Suite(.serialized) struct CompressedBodyRouteTests {
    static func events(_ prefix: String, _ n: Int) -> [UInt8] {
        Array(
            (1...n).map { #"{"name":"AppLaunch","appId":"com.contoso.gzip","deviceId":"d","eventId":"\#(prefix)-\#($0)"}"# }.joined(
                separator: "\n"
            ).utf8 + [0x0A])
    }

    @Test func everyGzipMemberIsStoredAndTrailingDataIsRefused() async throws {
        try await IngestHarness.run { (d: IngestHarness) async throws in
            // What `cat a.gz b.gz` produces.
            let first = try Deflate.compress(Self.events("a", 3), format: .gzip)
            let concatenated = try first + Deflate.compress(Self.events("b", 4), format: .gzip)
            let (status, body, _) = try await d.exchange("/v1/telemetry", bytes: concatenated, headers: [("Content-Encoding", "gzip")])
            #expect(status == 200 && parseJSON(body)["accepted"] as? Int == 7, "\(String(decoding: body, as: UTF8.self))")

            for (encoding, format) in [("gzip", ZlibFormat.gzip), ("deflate", .zlib), ("deflate", .raw)] {
                let stream = try Deflate.compress(Self.events("t-\(format.rawValue)", 2), format: format)
                let (status, body, _) = try await d.exchange(
                    "/v1/telemetry", bytes: stream + Array("trailing garbage".utf8), headers: [("Content-Encoding", encoding)])
                let error = parseJSON(body)["error"] as? [String: Any]
                #expect(status == 400, "\(format): \(status)")
                #expect(error?["code"] as? String == "bad_encoding")
                let message = error?["message"] as? String ?? ""
                #expect(message.contains("16 bytes of trailing data"), "\(format): \(message)")
            }
            let stored = try await d.allEvents(extra: "&app=com.contoso.gzip").compactMap { $0["eventId"] as? String }
            #expect(stored.sorted() == ["a-1", "a-2", "a-3", "b-1", "b-2", "b-3", "b-4"])
        }
    }
}
