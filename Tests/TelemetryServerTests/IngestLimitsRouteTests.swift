import AsyncHTTPClient
import Compression
import Foundation
import NIOCore
import TestSupport
import Testing

@testable import TelemetryServer

/// Each input limit (SPEC §8, issue 7), in process over the router and a real store: just
/// under passes, just over is refused with the limit's name and value, and nothing of a
/// refused request is kept. (The 1 GB deflate bomb, which measures the daemon process's
/// peak RSS, stays in IntegrationTests.LimitsTests.)
struct IngestLimitsRouteTests {
    static func small(_ id: String, data: String = #"{"statusCode":100}"#) -> String {
        #"{"name":"LimitProbe","appId":"com.contoso.limits","eventId":"\#(id)","data":\#(data)}"#
    }

    /// An event of exactly `total` bytes, its size made of `data` members holding `filler`
    /// text of at most `chunk` bytes each.
    static func padded(_ id: String, total: Int, chunk: Int = 500, filler: (Int) -> String = { String(repeating: "x", count: $0) })
        -> String
    {
        let head = #"{"name":"LimitProbe","appId":"com.contoso.limits","eventId":"\#(id)","data":{"#
        let tail = "}}"
        var fields: [String] = []
        var used = head.utf8.count + tail.utf8.count
        var k = 0
        while true {
            let key = "p\(k)"
            let overhead = key.utf8.count + 5 + (fields.isEmpty ? 0 : 1)
            let room = total - used - overhead
            precondition(room >= 0, "event too small to pad to \(total)")
            let take = room <= chunk ? room : (room - chunk < 16 ? chunk - 16 : chunk)
            fields.append("\"\(key)\":\"\(filler(take))\"")
            used += overhead + take
            if take == room { break }
            k += 1
        }
        let line = head + fields.joined(separator: ",") + tail
        precondition(line.utf8.count == total)
        return line
    }

    /// NDJSON of exactly `total` bytes with no line over `lineBytes`.
    static func ndjson(
        total: Int, lineBytes: Int, chunk: Int = 1000, filler: @escaping (Int) -> String = { String(repeating: "x", count: $0) }
    ) -> [UInt8] {
        let count = (total + 1 + lineBytes) / (lineBytes + 1)
        let content = total - (count - 1)
        let lines = (0..<count).map { i in
            padded("body-\(i)-\(UUID().uuidString)", total: content / count + (i < content % count ? 1 : 0), chunk: chunk, filler: filler)
        }
        let body = Array(lines.joined(separator: "\n").utf8)
        precondition(body.count == total)
        return body
    }

    static func message(_ body: [UInt8]) -> String {
        ((parseJSON(body)["error"] as? [String: Any])?["message"] as? String) ?? String(decoding: body.prefix(2000), as: UTF8.self)
    }

    static func rejections(_ body: [UInt8]) -> [Int: String] {
        var out: [Int: String] = [:]
        for r in parseJSON(body)["rejected"] as? [[String: Any]] ?? [] {
            if let line = r["line"] as? Int { out[line] = r["error"] as? String ?? "" }
        }
        return out
    }

    @Test func lineRecordsDepthFieldsAndStringLimits() async throws {
        let limits: @Sendable (inout ServerConfiguration) -> Void = { c in
            c.decodeLimits.maxLineBytes = 4096
            c.decodeLimits.maxRecordsPerRequest = 20
            c.decodeLimits.maxDepth = 5
            c.decodeLimits.maxFields = 30
            c.decodeLimits.maxStringBytes = 1000
        }
        try await IngestHarness.run(adjust: limits) { d in
            func post(_ lines: [String]) async throws -> (Int, [UInt8]) {
                let (s, b, _) = try await d.exchange(
                    "/v1/telemetry", bytes: Array(lines.joined(separator: "\n").utf8), headers: [("Content-Type", "application/x-ndjson")])
                return (s, b)
            }
            // Line length: 4096 passes, 4097 is rejected by name.
            var (s, b) = try await post([Self.padded("line-ok", total: 4096)])
            #expect(s == 200 && parseJSON(b)["accepted"] as? Int == 1, "\(Self.message(b))")
            (s, b) = try await post([Self.small("line-1"), Self.padded("line-over", total: 4097)])
            #expect(s == 200 && parseJSON(b)["accepted"] as? Int == 1)
            #expect(Self.rejections(b)[2]?.contains("maxLineBytes=4096") == true, "\(Self.rejections(b))")

            // Records per request: 20 pass, 21 are refused whole (413) by name, NDJSON or array.
            (s, b) = try await post((0..<20).map { Self.small("rec-\($0)") })
            #expect(s == 200 && parseJSON(b)["accepted"] as? Int == 20)
            (s, b) = try await post((0..<21).map { Self.small("rec-over-\($0)") })
            #expect(s == 413 && Self.message(b).contains("maxRecordsPerRequest=20"), "\(s) \(Self.message(b))")
            let array = Array(("[" + (0..<21).map { Self.small("arr-\($0)") }.joined(separator: ",") + "]").utf8)
            let (sa, ba, _) = try await d.exchange("/v1/telemetry", bytes: array, headers: [("Content-Type", "application/json")])
            #expect(sa == 413 && Self.message(ba).contains("maxRecordsPerRequest=20"))
            #expect(try await d.allEvents(extra: "&app=com.contoso.limits").count == 22, "nothing of a refused request is kept")

            // Depth: the record object is level 1; 5 levels pass, 6 are rejected.
            (s, b) = try await post([Self.small("depth-ok", data: #"{"a":{"b":{"c":{}}}}"#)])
            #expect(s == 200 && parseJSON(b)["accepted"] as? Int == 1, "\(Self.message(b))")
            (s, b) = try await post([Self.small("depth-1"), Self.small("depth-over", data: #"{"a":{"b":{"c":{"d":{}}}}}"#)])
            #expect(Self.rejections(b)[2]?.contains("maxDepth=5") == true, "\(Self.rejections(b))")

            // Fields, counted at every depth: 4 top-level members + 26 in data = 30 pass; 31 do not.
            func fields(_ n: Int) -> String { "{" + (0..<n).map { #""f\#($0)":1"# }.joined(separator: ",") + "}" }
            (s, b) = try await post([Self.small("fields-ok", data: fields(26))])
            #expect(s == 200 && parseJSON(b)["accepted"] as? Int == 1, "\(Self.message(b))")
            (s, b) = try await post([Self.small("fields-1"), Self.small("fields-over", data: fields(27))])
            #expect(Self.rejections(b)[2]?.contains("maxFields=30") == true, "\(Self.rejections(b))")

            // String length: 1000 bytes pass, 1001 do not.
            let ok = String(repeating: "s", count: 1000)
            (s, b) = try await post([Self.small("string-ok", data: #"{"note":"\#(ok)"}"#)])
            #expect(s == 200 && parseJSON(b)["accepted"] as? Int == 1, "\(Self.message(b))")
            (s, b) = try await post([Self.small("string-1"), Self.small("string-over", data: #"{"note":"\#(ok)s"}"#)])
            #expect(Self.rejections(b)[2]?.contains("maxStringBytes=1000") == true, "\(Self.rejections(b))")

            // A body whose every line breaks a limit is a 400 that still names it.
            (s, b) = try await post([Self.padded("only-over", total: 4097)])
            #expect(s == 400 && String(decoding: b, as: UTF8.self).contains("maxLineBytes=4096"), "\(s) \(Self.message(b))")
        }
    }

    @Test func bodyDecompressedAndRatioLimits() async throws {
        // Live: the chunked request below needs a real connection (the router test client
        // always sends a length).
        let limits: @Sendable (inout ServerConfiguration) -> Void = { c in
            c.maxBodyBytes = 1_048_576
            c.inflateLimits.maxOutputBytes = 2_097_152
            c.inflateLimits.maxRatio = 20
        }
        try await IngestHarness.run(live: true, adjust: limits) { d in
            // Body: exactly 1 MiB passes; one byte more is a 413 naming maxBodyBytes.
            let exact = Self.ndjson(total: 1_048_576, lineBytes: 60_000)
            var (s, b, _) = try await d.exchange("/v1/telemetry", bytes: exact)
            #expect(s == 200, "\(Self.message(b))")
            (s, b, _) = try await d.exchange("/v1/telemetry", bytes: Self.ndjson(total: 1_048_577, lineBytes: 60_000))
            #expect(s == 413 && Self.message(b).contains("maxBodyBytes=1048576"), "\(s) \(Self.message(b))")
            // The same without a Content-Length (chunked): refused while reading.
            let port = try #require(d.client.port)
            var r = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/telemetry")
            r.method = .POST
            r.headers.add(name: "Authorization", value: "Bearer \(d.adminToken)")
            let over = Self.ndjson(total: 1_048_577, lineBytes: 60_000)
            r.body = .stream(
                AsyncStream<ByteBuffer> { c in
                    for start in stride(from: 0, to: over.count, by: 65_536) {
                        c.yield(ByteBuffer(bytes: over[start..<min(start + 65_536, over.count)]))
                    }
                    c.finish()
                }, length: .unknown)
            if let resp = try? await HTTPClient.shared.execute(r, timeout: .seconds(30)) {
                let body = [UInt8](buffer: try await resp.body.collect(upTo: 1 << 20))
                #expect(
                    resp.status.code == 413 && Self.message(body).contains("maxBodyBytes=1048576"), "\(resp.status) \(Self.message(body))")
            }

            // Decompressed: low-entropy text (ratio ~4) of exactly 2 MiB passes; one byte more is refused.
            // Seeded: the same bodies every run (and a generator without a syscall per letter).
            var rng = SeededRandom(seed: 27)
            let letters = Array("abcd")
            let mixed: (Int) -> String = { n in String((0..<n).map { _ in letters[Int.random(in: 0..<4, using: &rng)] }) }
            let under = Self.ndjson(total: 2_097_152, lineBytes: 60_000, filler: mixed)
            let underWire = try Deflate.compress(under, format: .zlib)
            #expect(underWire.count < 1_048_576 && under.count / underWire.count < 20)
            (s, b, _) = try await d.exchange("/v1/telemetry", bytes: underWire, headers: [("Content-Encoding", "deflate")])
            #expect(s == 200, "\(Self.message(b))")
            let overDecompressed = try Deflate.compress(Self.ndjson(total: 2_097_153, lineBytes: 60_000, filler: mixed), format: .raw)
            (s, b, _) = try await d.exchange("/v1/telemetry", bytes: overDecompressed, headers: [("Content-Encoding", "deflate")])
            #expect(s == 413 && Self.message(b).contains("maxDecompressedBytes=2097152"), "\(s) \(Self.message(b))")

            // Ratio: the most compressible filler whose ratio stays under 20 passes; 'x' runs (ratio
            // in the hundreds) within the size limit are refused as a likely bomb.
            var best: (ratio: Int, wire: [UInt8])?
            for p in [0.8, 0.95] {
                let skewed: (Int) -> String = { n in String((0..<n).map { _ in Double.random(in: 0..<1, using: &rng) < p ? "a" : "b" }) }
                let plain = Self.ndjson(total: 1_500_000, lineBytes: 60_000, filler: skewed)
                let wire = try Deflate.compress(plain, format: .zlib)
                let ratio = plain.count / wire.count
                if (ratio < 20) && (ratio > (best?.ratio ?? 0)) { best = (ratio, wire) }
            }
            let under20 = try #require(best)
            #expect(under20.ratio >= 5, "ratio \(under20.ratio)")
            (s, b, _) = try await d.exchange("/v1/telemetry", bytes: under20.wire, headers: [("Content-Encoding", "deflate")])
            #expect(s == 200, "ratio \(under20.ratio): \(Self.message(b))")
            let bomb = try Deflate.compress(Self.ndjson(total: 1_500_000, lineBytes: 60_000), format: .gzip)
            (s, b, _) = try await d.exchange("/v1/telemetry", bytes: bomb, headers: [("Content-Encoding", "gzip")])
            #expect(s == 413 && Self.message(b).contains("maxCompressionRatio=20"), "\(s) \(Self.message(b))")
        }
    }
}
