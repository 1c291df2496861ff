import AsyncHTTPClient
import Compression
import Foundation
import NIOCore
import TestSupport
import Testing

/// Decompressed bytes count against `maxInFlightBytes` as they are produced (issue 11 item
/// 12): small gzip bodies that inflate to megabytes cannot all be admitted at once on the
/// strength of their wire size. Past the budget mid-inflate a body is refused with 503,
/// `Retry-After` and the limit's name, and nothing of it is stored.
@Suite(.serialized) struct InflatedBodyBudgetTests {
    static let arguments = [
        "--limits-max-in-flight-bytes", "\(8 << 20)", "--limits-max-decompressed-bytes", "\(16 << 20)",
        "--limits-max-compression-ratio", "5000",
    ]

    /// NDJSON events of about 60 KB each (two 30,000-byte strings), `bytes` in all: a few
    /// kilobytes once gzipped.
    static func body(_ tag: String, bytes: Int) -> (ids: [String], ndjson: [UInt8]) {
        let pad = String(repeating: "x", count: 30_000)
        let count = max(1, bytes / 60_200)
        let ids = (0..<count).map { "\(tag)-\($0)" }
        let lines = ids.map {
            #"{"name":"AppLaunch","appId":"com.contoso.inflate","deviceId":"d","eventId":"\#($0)","data":{"p0":"\#(pad)","p1":"\#(pad)"}}"#
        }
        return (ids, Array(lines.joined(separator: "\n").utf8))
    }

    static func gzipped(_ tag: String, bytes: Int) throws -> (ids: [String], wire: [UInt8]) {
        let (ids, ndjson) = body(tag, bytes: bytes)
        return (ids, try Deflate.compress(ndjson, level: 9, format: .gzip))
    }

    static func storedIds(_ d: DaemonProcess) async throws -> Set<String> {
        Set(try await d.allEvents(extra: "&app=com.contoso.inflate").compactMap { $0["eventId"] as? String })
    }

    /// The in-flight gauge, read from `/metrics`.
    static func inFlight(_ d: DaemonProcess) async throws -> Int {
        let (_, exposition) = try await d.get("/metrics")
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
        let d = try DaemonProcess(extraArguments: Self.arguments)
        try await d.start()
        defer { d.cleanUp() }
        let token = try #require(d.adminToken)
        let (slowIds, slowBody) = Self.body("slow", bytes: 6 << 20)
        let (chunks, feed) = AsyncStream<ByteBuffer>.makeStream()
        var request = HTTPClientRequest(url: d.baseURL + "/v1/telemetry")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/x-ndjson")
        request.body = .stream(chunks, length: .known(Int64(slowBody.count)))
        let client = DaemonProcess.makeClient()
        let slow = Task { () -> (Int, [UInt8]) in
            let response = try await client.execute(request, timeout: .seconds(60))
            return (Int(response.status.code), [UInt8](buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        feed.yield(ByteBuffer(bytes: slowBody.prefix(1024)))
        // Wait (bounded) until the daemon has admitted the slow upload and reserved its size.
        let deadline = ContinuousClock.now + .seconds(20)
        while try await Self.inFlight(d) < slowBody.count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(try await Self.inFlight(d) >= slowBody.count)

        let (bombIds, bomb) = try Self.gzipped("bomb", bytes: 6 << 20)
        #expect(bomb.count < 64 << 10 && bomb.count + slowBody.count < 8 << 20, "the body must fit the budget by its wire size")
        let (status, answer, headers) = try await d.post("/v1/telemetry", body: bomb, headers: [("Content-Encoding", "gzip")])
        let message = (parseJSON(answer)["error"] as? [String: Any])?["message"] as? String ?? String(decoding: answer, as: UTF8.self)
        #expect(status == 503, "\(status): \(message)")
        #expect(headers.first(name: "Retry-After") != nil)
        #expect(message.contains("maxInFlightBytes=\(8 << 20)"), "\(message)")

        feed.yield(ByteBuffer(bytes: slowBody.dropFirst(1024)))
        feed.finish()
        let (slowStatus, slowAnswer) = try await slow.value
        try await client.shutdown()
        #expect(slowStatus == 200 && parseJSON(slowAnswer)["accepted"] as? Int == slowIds.count, "\(slowStatus)")
        #expect(try await Self.storedIds(d) == Set(slowIds), "nothing of the refused body is stored")

        // Alone (so the oldest in flight), the same body is admitted: the oldest may always grow.
        let (again, againAnswer, _) = try await d.post("/v1/telemetry", body: bomb, headers: [("Content-Encoding", "gzip")])
        #expect(again == 200 && parseJSON(againAnswer)["accepted"] as? Int == bombIds.count)
        #expect(try await Self.inFlight(d) == 0, "every reservation is given back")
    }

    /// Sixteen clients post at once, each a ~50 KB gzip body that inflates to 12 MiB (192
    /// MiB in all against an 8 MiB budget). Every answer is 200 or a 503 naming the budget;
    /// exactly the acknowledged bodies are stored; the daemon's peak memory stays far below
    /// what admitting every body on its wire size took (about 270 MiB, against 95 MiB now).
    @Test func concurrentInflatingBodiesStayWithinTheBudget() async throws {
        let d = try DaemonProcess(extraArguments: Self.arguments)
        try await d.start()
        defer { d.cleanUp() }
        let bodies = try (0..<16).map { try Self.gzipped("c\($0)", bytes: 12 << 20) }
        let results = try await withThrowingTaskGroup(of: (Int, Int, String, Bool).self) { group in
            for (i, b) in bodies.enumerated() {
                group.addTask {
                    let (status, answer, headers) = try await d.post("/v1/telemetry", body: b.wire, headers: [("Content-Encoding", "gzip")])
                    let message = (parseJSON(answer)["error"] as? [String: Any])?["message"] as? String ?? ""
                    return (i, status, message, headers.first(name: "Retry-After") != nil)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let hwm = try #require(LimitsTests.peakRSSKiB(pid: d.process!.processIdentifier))
        var acknowledged = Set<String>()
        for (i, status, message, retryAfter) in results {
            #expect(status == 200 || status == 503, "body \(i): \(status) \(message)")
            if status == 200 { acknowledged.formUnion(bodies[i].ids) }
            if status == 503 {
                #expect(retryAfter && message.contains("maxInFlightBytes"), "body \(i): \(message)")
            }
        }
        #expect(!acknowledged.isEmpty)
        #expect(try await Self.storedIds(d) == acknowledged)
        print(
            "inflated bodies: \(results.filter { $0.1 == 200 }.count) stored, \(results.filter { $0.1 == 503 }.count) refused, VmHWM \(hwm) KiB"
        )
        #expect(hwm < 180 * 1024, "daemon VmHWM \(hwm) KiB")
    }
}
