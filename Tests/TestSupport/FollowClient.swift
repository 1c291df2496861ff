import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

/// One open follow stream, read by a background task into a buffer the test polls. It has
/// its own HTTP client, so closing it really closes the connection (the shared client
/// would keep it pooled).
public final class FollowClient: @unchecked Sendable {
    public let client = HTTPClient(eventLoopGroupProvider: .singleton)
    public let serverSentEvents: Bool
    public private(set) var contentType: String?
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private var ended = false
    private var reader: Task<Void, Never>?

    private init(serverSentEvents: Bool) { self.serverSentEvents = serverSentEvents }

    /// Opens the follow stream at `url` with `token`.
    public static func open(url: String, token: String, serverSentEvents: Bool) async throws -> FollowClient {
        let stream = FollowClient(serverSentEvents: serverSentEvents)
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: serverSentEvents ? "text/event-stream" : "application/x-ndjson")
        let response: HTTPClientResponse
        do {
            response = try await stream.client.execute(request, timeout: .seconds(30))
        } catch {
            try? await stream.client.shutdown()
            throw error
        }
        #expect(response.status == .ok)
        stream.contentType = response.headers.first(name: "Content-Type")
        stream.reader = Task {
            do {
                for try await chunk in response.body {
                    stream.lock.withLock { stream.buffer.append(contentsOf: chunk.readableBytesView) }
                }
            } catch {}
            stream.lock.withLock { stream.ended = true }
        }
        return stream
    }

    public var rawText: String { lock.withLock { String(decoding: buffer, as: UTF8.self) } }
    public var hasEnded: Bool { lock.withLock { ended } }

    /// The records received so far: NDJSON lines, or the `data:` of each event.
    public var records: [[String: Any]] {
        let lines = rawText.split(separator: "\n", omittingEmptySubsequences: true)
        let payloads =
            serverSentEvents
            ? lines.filter { $0.hasPrefix("data: ") }.map { $0.dropFirst(6) }
            : lines.filter { $0.hasPrefix("{") }
        return payloads.map { parseJSON(Array($0.utf8)) }
    }

    public func waitFor(message: String, timeout: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if records.contains(where: { $0["message"] as? String == message }) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    public func waitForEnd(timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if hasEnded { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return hasEnded
    }

    /// Drops the connection from the client side.
    public func close() async throws {
        reader?.cancel()
        try await client.shutdown()
        _ = await reader?.value
    }
}
