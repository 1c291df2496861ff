import AsyncHTTPClient
import Foundation
import NIOCore
import TelemetryModel
import Testing

@testable import TelemetryServer

/// `follow=true` like `journalctl -f` (issue 24): it starts with the newest 10 matches (`tail`
/// changes it), then streams in arrival order; a record that arrives late is delivered
/// whatever its device time (the window chooses the backlog only), and every streamed record
/// says how late it arrived. In process, on a live listener with a clock the test sets.
@Suite struct FollowArrivalTests {
    static let now = Timestamp.parse("2026-11-26T12:00:00Z")!

    /// NDJSON lines of a follow stream, gathered as they arrive.
    final class Stream: @unchecked Sendable {
        let lock = NSLock()
        var lines: [[String: Any]] = []
        var task: Task<Void, Never>?

        init(url: String, token: String) {
            task = Task {
                var request = HTTPClientRequest(url: url)
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                request.headers.add(name: "Accept", value: "application/x-ndjson")
                guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(60)) else { return }
                var pending: [UInt8] = []
                do {
                    for try await chunk in response.body {
                        pending += chunk.readableBytesView
                        while let nl = pending.firstIndex(of: 0x0A) {
                            let line = Array(pending[..<nl])
                            pending.removeSubrange(...nl)
                            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
                            lock.withLock { lines.append(object) }
                        }
                    }
                } catch {}
            }
        }

        var messages: [String] { lock.withLock { lines.compactMap { $0["message"] as? String } } }

        /// Waits (bounded) until `count` records arrived.
        func waitFor(_ count: Int, tries: Int = 500) async -> Bool {
            for _ in 0..<tries {
                if lock.withLock({ lines.count }) >= count { return true }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return false
        }

        func close() { task?.cancel() }
    }

    static func log(_ device: String, _ message: String, at time: Int64) -> String {
        #"{"appId":"com.contoso.mail","deviceId":"\#(device)","level":"info","message":"\#(message)","time":"\#(Timestamp.format(milliseconds: time))"}"#
    }

    @Test func startsWithTheLastTenThenDeliversLateArrivalsMarked() async throws {
        let clock = SettableClock(Self.now)
        try await IngestHarness.run(clock: clock, live: true) { h in
            let port = try #require(h.client.port)
            let backlog = (0..<15).map { Self.log("dev-f", "backlog \($0)", at: Self.now - 30_000 + Int64($0) * 1000) }
            #expect(try await h.post("/v1/logs", backlog.joined(separator: "\n")).status == .ok)

            let stream = Stream(url: "http://127.0.0.1:\(port)/v1/logs?follow=true&device=dev-f&since=-1m", token: h.adminToken)
            defer { stream.close() }
            #expect(await stream.waitFor(10))
            #expect(stream.messages == (5..<15).map { "backlog \($0)" })

            // Twenty minutes late: older than the stream's --since, delivered anyway, and said so.
            clock.set(Self.now + 5_000)
            #expect(try await h.post("/v1/logs", Self.log("dev-other", "not this device", at: Self.now)).status == .ok)
            #expect(try await h.post("/v1/logs", Self.log("dev-f", "arrived late", at: Self.now - 20 * 60_000)).status == .ok)
            #expect(try await h.post("/v1/logs", Self.log("dev-f", "on time", at: Self.now + 4_000)).status == .ok)
            #expect(await stream.waitFor(12))
            #expect(stream.messages.suffix(2) == ["arrived late", "on time"])
            let records = stream.lock.withLock { stream.lines }
            #expect(records.first { $0["message"] as? String == "arrived late" }?["arrivalDelayMs"] as? Int == 20 * 60_000 + 5_000)
            #expect(records.first { $0["message"] as? String == "on time" }?["arrivalDelayMs"] as? Int == 1_000)
            #expect(records.allSatisfy { $0["arrivalDelayMs"] is Int && $0["id"] is Int })
        }
    }

    @Test func tailChoosesTheBacklog() async throws {
        try await IngestHarness.run(live: true) { h in
            let port = try #require(h.client.port)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let backlog = (0..<5).map { Self.log("dev-t", "line \($0)", at: now - 5_000 + Int64($0)) }
            #expect(try await h.post("/v1/logs", backlog.joined(separator: "\n")).status == .ok)
            let three = Stream(url: "http://127.0.0.1:\(port)/v1/logs?follow=true&device=dev-t&tail=3", token: h.adminToken)
            defer { three.close() }
            #expect(await three.waitFor(3))
            #expect(three.messages == ["line 2", "line 3", "line 4"])
            let none = Stream(url: "http://127.0.0.1:\(port)/v1/logs?follow=true&device=dev-t&tail=0", token: h.adminToken)
            defer { none.close() }
            // No backlog line arrives; new ones do (posted until the stream, subscribed some time
            // after its headers, shows one).
            var posted = 0
            while none.messages.isEmpty, posted < 100 {
                #expect(try await h.post("/v1/logs", Self.log("dev-t", "new \(posted)", at: now)).status == .ok)
                posted += 1
                _ = await none.waitFor(1, tries: 20)
            }
            #expect(none.messages.first?.hasPrefix("new ") == true, "\(none.messages)")
            #expect(!none.messages.contains { $0.hasPrefix("line") })
            let refused = try await h.client.execute(
                uri: "/v1/logs?follow=true&tail=-1", method: .get, headers: [.authorization: "Bearer \(h.adminToken)"]
            ) { $0.status }
            #expect(refused == .badRequest)
            let pageRefused = try await h.client.execute(
                uri: "/v1/logs?tail=many", method: .get, headers: [.authorization: "Bearer \(h.adminToken)"]
            ) { $0.status }
            #expect(pageRefused == .badRequest, "a malformed tail is refused without follow too")
        }
    }
}
