import ControlState
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import TelemetryStore
import Testing

@testable import TelemetryServer

/// An open `follow=true` stream kept delivering after its token was revoked (audit). It now
/// ends as soon as the token store says a token changed: revoked through the API, or the
/// token table re-read (SIGHUP) with the token's scope, `pii` or apps changed by another
/// process. No sleeps: each case waits until the stream listens for token changes, changes
/// the token, and the request must then end on its own, with a last message saying why.
@Suite(.serialized, .timeLimit(.minutes(1))) struct FollowRevocationTests {
    enum Change: CaseIterable {
        case revokedThroughTheAPI, lostReadOnReload, lostPIIOnReload, appsChangedOnReload
    }

    static func follow(
        _ daemon: AccessTestDaemon, _ client: some TestClientProtocol, secret: String, serverSentEvents: Bool,
        change: @escaping @Sendable () async throws -> Void
    ) async throws -> (status: HTTPResponse.Status, body: String) {
        let watching = daemon.components.tokens.watcherCount
        let accept = serverSentEvents ? "text/event-stream" : "application/x-ndjson"
        let request = Task {
            try await client.execute(
                uri: "/v1/logs?follow=true", method: .get, headers: [.authorization: "Bearer \(secret)", .accept: accept]
            ) { ($0.status, String(buffer: $0.body)) }
        }
        // The stream listens for token changes once it is open; only then is the token changed.
        let opened = ContinuousClock.now
        while daemon.components.tokens.watcherCount == watching {
            guard ContinuousClock.now - opened < .seconds(20) else {
                Issue.record("the follow stream never listened for token changes")
                return (.ok, "")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        try await change()
        // A safety net, not a measurement: a stream that never ends fails the test instead of
        // hanging it (the stream ends on the change notice, long before this).
        let first = FirstOf<(HTTPResponse.Status, String)?>()
        Task { first.offer(try? await request.value) }
        Task {
            try? await Task.sleep(for: .seconds(20))
            first.offer(nil)
        }
        guard let answer = await first.value else {
            Issue.record("the stream was still open 20 s after its token changed")
            return (.ok, "")
        }
        return answer
    }

    @Test(arguments: Change.allCases, [false, true])
    func aStreamEndsWhenItsTokenNoLongerAllowsIt(change: Change, serverSentEvents: Bool) async throws {
        try await AccessTestDaemon.run { daemon, client in
            let tokens = daemon.components.tokens
            let admin = daemon.secret("admin")
            let log = #"{"level":"info","message":"before the change","deviceId":"d"}"#
            try await client.execute(
                uri: "/v1/logs?app=com.contoso.a", method: .post, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: log)
            ) { #expect($0.status == .ok) }
            let (token, secret) = try await tokens.create(
                name: "follower", scopes: [.read, .pii], apps: change == .appsChangedOnReload ? ["com.contoso.a"] : [], now: 0)
            // What another process writes before `systemctl reload`.
            let control = try DatabasePool(path: ControlDatabase.file(in: daemon.components.configuration.dataDirectory).path)
            let expected: String
            let (status, body) = try await Self.follow(daemon, client, secret: secret, serverSentEvents: serverSentEvents) {
                switch change {
                case .revokedThroughTheAPI:
                    try await client.execute(uri: "/v1/tokens/\(token.id)", method: .delete, headers: [.authorization: "Bearer \(admin)"]) {
                        #expect($0.status == .noContent)
                    }
                case .lostReadOnReload:
                    try await control.write {
                        try $0.execute(sql: "UPDATE token SET scopes = 'ingest' WHERE id = ?", arguments: [token.id])
                    }
                    try tokens.reload()
                case .lostPIIOnReload:
                    try await control.write { try $0.execute(sql: "UPDATE token SET scopes = 'read' WHERE id = ?", arguments: [token.id]) }
                    try tokens.reload()
                case .appsChangedOnReload:
                    try await control.write {
                        try $0.execute(
                            sql: "INSERT INTO token_app(tokenId, position, appId) VALUES (?, 1, 'com.contoso.b')", arguments: [token.id])
                    }
                    try tokens.reload()
                }
            }
            switch change {
            case .revokedThroughTheAPI: expected = "token_revoked"
            case .lostReadOnReload: expected = "insufficient_scope"
            case .lostPIIOnReload, .appsChangedOnReload: expected = "token_changed"
            }
            #expect(status == .ok)
            #expect(body.contains("before the change"), "the backlog was streamed first: \(body)")
            let last = body.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.contains("\"code\":\"\(expected)\""), "\(body)")
            if serverSentEvents { #expect(body.contains("event: end\ndata: {\"error\"")) }
            // The stream is gone, not just quiet: it no longer listens.
            #expect(tokens.watcherCount == 0)
        }
    }

    /// A token that changes in a way that does not touch the stream (another token revoked)
    /// leaves it open: the stream looks again and carries on.
    @Test func anotherTokensRevocationLeavesTheStreamOpen() async throws {
        try await AccessTestDaemon.run { daemon, client in
            let tokens = daemon.components.tokens
            let (follower, secret) = try await tokens.create(name: "follower", scopes: [.read], apps: [], now: 0)
            let (other, _) = try await tokens.create(name: "other", scopes: [.read], apps: [], now: 0)
            let (_, body) = try await Self.follow(daemon, client, secret: secret, serverSentEvents: false) {
                let revokedOther = try await tokens.revoke(id: other.id)
                #expect(revokedOther)
                // Still open after looking again: the stream ends only once its own token goes.
                await Task.yield()
                #expect(tokens.watcherCount == 1)
                let revokedFollower = try await tokens.revoke(id: follower.id)
                #expect(revokedFollower)
            }
            #expect(body.contains("token_revoked") && body.contains("follower"), "\(body)")
        }
    }
}

/// Whichever of several tasks offers a value first.
private final class FirstOf<T: Sendable>: Sendable {
    private let state = Mutex<(value: T?, done: Bool, waiter: CheckedContinuation<T, Never>?)>((nil, false, nil))

    func offer(_ value: T) {
        let waiter = state.withLock { s -> CheckedContinuation<T, Never>? in
            guard !s.done else { return nil }
            s.done = true
            s.value = value
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: value)
    }

    var value: T {
        get async {
            await withCheckedContinuation { c in
                let ready = state.withLock { s -> T? in
                    if s.done { return s.value }
                    s.waiter = c
                    return nil
                }
                if let ready { c.resume(returning: ready) }
            }
        }
    }
}
