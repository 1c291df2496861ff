import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// Load beyond capacity from parallel clients (issue 7): the daemon answers only 200, 429
/// or 503 (the refusals with `Retry-After`), its memory stays bounded, and every event it
/// acknowledged is queryable afterwards, exactly once.
@Suite(.serialized) struct BackpressureTests {
    /// What the clients saw, shared between them.
    struct Tally: Sendable {
        var acknowledged: Set<String> = []
        var statuses: [Int: Int] = [:]
        var refusalsWithoutRetryAfter = 0
        var transportErrors: [String] = []
        var shortAcks = 0
    }

    static func batch(client: Int, round: Int, size: Int) -> (ids: [String], body: [UInt8]) {
        let ids = (0..<size).map { "c\(client)-r\(round)-\($0)" }
        let pad = String(repeating: "p", count: 160)
        let lines = ids.map {
            #"{"name":"AppLaunch","appId":"com.contoso.load","deviceId":"dev-\#(client)","eventId":"\#($0)","data":{"managementType":"MDM","note":"\#(pad)"}}"#
        }
        return (ids, Array(lines.joined(separator: "\n").utf8))
    }

    @Test func parallelLoadIsRefusedCleanlyAndNothingAcknowledgedIsLost() async throws {
        let d = try DaemonProcess(extraArguments: ["--limits-max-in-flight-bytes", "1048576", "--limits-max-queued-records", "1000"])
        try await d.start()
        defer { d.cleanUp() }
        let token = try #require(d.adminToken)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let shared = BackpressureTallyBox()
        let deadline = ContinuousClock.now + .seconds(4)
        await withTaskGroup(of: Void.self) { group in
            for c in 0..<32 {
                group.addTask {
                    var round = 0
                    while ContinuousClock.now < deadline {
                        let (ids, body) = Self.batch(client: c, round: round, size: 500)
                        round += 1
                        var r = HTTPClientRequest(url: d.baseURL + "/v1/telemetry")
                        r.method = .POST
                        r.headers.add(name: "Authorization", value: "Bearer \(token)")
                        r.headers.add(name: "Content-Type", value: "application/x-ndjson")
                        r.body = .bytes(ByteBuffer(bytes: body))
                        do {
                            let resp = try await client.execute(r, timeout: .seconds(30))
                            let answer = [UInt8](buffer: try await resp.body.collect(upTo: 1 << 20))
                            let status = Int(resp.status.code)
                            let accepted = parseJSON(answer)["accepted"] as? Int
                            let retryAfter = resp.headers.first(name: "Retry-After")
                            shared.withLock { t in
                                t.statuses[status, default: 0] += 1
                                if status == 200 {
                                    t.acknowledged.formUnion(ids)
                                    if accepted != ids.count { t.shortAcks += 1 }
                                }
                                if status == 429 || status == 503, retryAfter == nil { t.refusalsWithoutRetryAfter += 1 }
                            }
                            if status != 200 { try? await Task.sleep(for: .milliseconds(20)) }
                        } catch {
                            shared.withLock { $0.transportErrors.append("\(error)") }
                        }
                    }
                }
            }
        }
        try await client.shutdown()
        let t = shared.withLock { $0 }
        let hwm = try #require(LimitsTests.peakRSSKiB(pid: d.process!.processIdentifier))
        #expect(Set(t.statuses.keys).isSubset(of: [200, 429, 503]), "statuses \(t.statuses)")
        #expect(t.transportErrors.isEmpty, "\(t.transportErrors.prefix(3))")
        #expect(t.refusalsWithoutRetryAfter == 0)
        #expect(t.shortAcks == 0, "a 200 acknowledged fewer events than were sent")
        #expect((t.statuses[200] ?? 0) > 0, "statuses \(t.statuses)")
        #expect((t.statuses[503] ?? 0) + (t.statuses[429] ?? 0) > 0, "the load never reached the limit: \(t.statuses)")
        #expect(hwm < 256 * 1024, "daemon VmHWM \(hwm) KiB under load")
        // Every acknowledged event is stored exactly once, and nothing refused was stored.
        let stored = try await d.allEvents(extra: "&app=com.contoso.load").compactMap { $0["eventId"] as? String }
        #expect(stored.count == Set(stored).count, "duplicates: \(stored.count - Set(stored).count)")
        #expect(
            Set(stored) == t.acknowledged,
            "acknowledged \(t.acknowledged.count), stored \(stored.count), missing \(t.acknowledged.subtracting(stored).prefix(5))")
        print("backpressure: statuses \(t.statuses), acknowledged \(t.acknowledged.count), VmHWM \(hwm) KiB")
    }
}

/// The tally behind a reference, so the client tasks can share it.
final class BackpressureTallyBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value = BackpressureTests.Tally()

    func withLock<T>(_ body: (inout BackpressureTests.Tally) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
