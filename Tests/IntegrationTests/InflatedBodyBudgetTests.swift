import Compression
import Foundation
import TestSupport
import Testing

/// Decompressed bytes count against `maxInFlightBytes` as they are produced (issue 11 item
/// 12): small gzip bodies that inflate to megabytes cannot all be admitted at once on the
/// strength of their wire size, and the daemon's peak memory shows it (read from /proc, so
/// this needs a process). One body refused mid-inflate, with 503, `Retry-After` and the
/// limit's name and nothing of it stored, is TelemetryServerTests.InflatedBodyBudgetRouteTests.
@Suite(.serialized) struct InflatedBodyBudgetTests {
    static let arguments = [
        "--limits-max-in-flight-bytes", "\(8 << 20)", "--limits-max-decompressed-bytes", "\(16 << 20)",
        "--limits-max-compression-ratio", "5000",
    ]

    static func body(_ tag: String, bytes: Int) -> (ids: [String], ndjson: [UInt8]) { InflatingBodies.ndjson(tag, bytes: bytes) }

    static func gzipped(_ tag: String, bytes: Int) throws -> (ids: [String], wire: [UInt8]) {
        let (ids, ndjson) = body(tag, bytes: bytes)
        return (ids, try Deflate.compress(ndjson, level: 9, format: .gzip))
    }

    static func storedIds(_ d: DaemonProcess) async throws -> Set<String> {
        Set(try await d.allEvents(extra: "&app=com.contoso.inflate").compactMap { $0["eventId"] as? String })
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
