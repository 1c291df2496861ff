import ControlState
import HTTPTypes
import Hummingbird
import ServiceLifecycle
import StoreCore
import TelemetryModel

/// `follow=true`: like `journalctl -f`, first the newest matching records (oldest first),
/// then every new match as it is committed, as server-sent events or NDJSON. Modelled on
/// systemd-journal-gatewayd's `/entries?follow`. The stream wakes on the store's commit
/// notices (on ClickHouse, its watermark poller's) rather than polling itself, sends a
/// heartbeat while idle (which is also how a vanished client is noticed), and ends on
/// client disconnect or daemon shutdown. Records come from the store
/// in the form the query's presenter (the caller's visibility) gives them.
///
/// The stream also ends, with a last message saying why, as soon as the token it was opened
/// with no longer allows it (`FollowAccess`): it wakes on the token store's change notices,
/// so a revocation ends it at once, not at its next record or heartbeat.
struct FollowStream: Sendable {
    let store: any RecordStore
    let query: RecordQuery
    let serverSentEvents: Bool
    /// The caller's token, re-checked on every wake; nil when auth is off.
    let access: FollowAccess?
    var heartbeat: Duration = .seconds(15)

    func response() -> Response {
        var headers: HTTPFields = [:]
        headers[.contentType] = serverSentEvents ? "text/event-stream" : "application/x-ndjson"
        headers[.cacheControl] = "no-cache"
        let this = self
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                try await this.stream(to: &writer)
                try await writer.finish(nil)
            })
    }

    enum Wake: Sendable {
        case commit(CommitNotice)
        case tick
        /// A token may have changed (revoked, or the tables re-read).
        case tokens
    }

    private func stream(to writer: inout any ResponseBodyWriter) async throws {
        // Subscribe first, so nothing committed between the backlog read and the wait is missed
        // and no revocation between the access check and the wait goes unseen.
        let commits = store.commits()
        let tokenChanges = access?.tokens.changes()
        if let ended = access?.refusal() { return try await end(ended, to: &writer) }
        var lastSeen = try await store.latestID(env: query.env)
        var backlog = query
        backlog.order = .desc
        backlog.after = nil
        backlog.limit = min(query.limit, 1000)
        backlog.throughID = lastSeen
        let initial = try await store.query(backlog).records.reversed()
        try await write(Array(initial), to: &writer)

        let (wakes, wake) = AsyncStream<Wake>.makeStream(bufferingPolicy: .bufferingNewest(8))
        // On daemon shutdown the wake stream ends, and with it the response body.
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await notice in commits { wake.yield(.commit(notice)) }
                    wake.finish()
                }
                group.addTask {
                    while !Task.isCancelled {
                        try await Task.sleep(for: heartbeat)
                        wake.yield(.tick)
                    }
                }
                if let tokenChanges {
                    group.addTask {
                        for await _ in tokenChanges { wake.yield(.tokens) }
                    }
                }
                defer { group.cancelAll() }
                for await event in wakes {
                    if let ended = access?.refusal() { return try await end(ended, to: &writer) }
                    switch event {
                    case .tokens:
                        continue
                    case .tick:
                        try await writer.write(ByteBuffer(string: serverSentEvents ? ": keep-alive\n\n" : "\n"))
                    case .commit(let notice):
                        guard notice.env == query.env, notice.kinds.contains(query.kind), notice.lastId > lastSeen else { continue }
                        var next = query.liveTail
                        next.order = .asc
                        next.limit = 1000
                        // Never past what the notice says is complete: on ClickHouse a newer
                        // id may be visible before an older one of another collector is.
                        next.throughID = notice.lastId
                        repeat {
                            next.after = lastSeen
                            let page = try await store.query(next)
                            try await write(page.records, to: &writer)
                            if let last = page.records.last { lastSeen = last.id }
                            if page.nextAfter == nil { break }
                        } while true
                        lastSeen = max(lastSeen, notice.lastId)
                    }
                }
            }
        } onGracefulShutdown: {
            wake.finish()
        }
    }

    /// The stream's last message: why it ends, in the API's error shape (an `end` event in
    /// server-sent events, an error line in NDJSON).
    private func end(_ error: APIError, to writer: inout any ResponseBodyWriter) async throws {
        var w = JSONWriter()
        w.beginObject()
        w.key("error")
        w.beginObject()
        w.field("code", error.code)
        w.field("message", error.message)
        w.endObject()
        w.endObject()
        var out = serverSentEvents ? Array("event: end\ndata: ".utf8) : []
        out += w.bytes
        out += Array((serverSentEvents ? "\n\n" : "\n").utf8)
        try await writer.write(ByteBuffer(bytes: out))
    }

    private func write(_ records: [StoredRecord], to writer: inout any ResponseBodyWriter) async throws {
        guard !records.isEmpty else { return }
        var out: [UInt8] = []
        for r in records {
            if serverSentEvents {
                out.append(contentsOf: "id: \(r.id)\nevent: \(query.kind.rawValue)\ndata: ".utf8)
                out.append(contentsOf: RecordRendering.renderFollowed(r))
                out.append(contentsOf: "\n\n".utf8)
            } else {
                out.append(contentsOf: RecordRendering.renderFollowed(r))
                out.append(0x0A)
            }
        }
        try await writer.write(ByteBuffer(bytes: out))
    }
}
