import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import StoreCore
import TelemetryModel
import TelemetryStore
import TestSupport
import Testing

@testable import TelemetryServer

/// The daemon's router and services in-process, with auth on, on a fresh data directory:
/// for ingest behaviour that does not need a separate process (signals and crashes do).
struct IngestHarness: Sendable {
    let client: any TestClientProtocol
    let components: DaemonComponents
    let adminToken: String

    struct Answer: Sendable {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: String

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:] }
        var accepted: Int? { json["accepted"] as? Int }
        var duplicates: Int? { (json["dropped"] as? [String: Int])?["duplicate"] }
        var rejectedLines: [Int] { (json["rejected"] as? [[String: Any]] ?? []).compactMap { $0["line"] as? Int } }
        var errorMessage: String { ((json["error"] as? [String: Any])?["message"] as? String) ?? body }
    }

    /// - Parameters:
    ///   - parent: where the data directory is made (the temporary directory unless a test
    ///     needs a particular filesystem).
    ///   - live: serve on a real socket (an ephemeral port on 127.0.0.1, `client.port`) for
    ///     a test that streams (follow); otherwise requests go straight to the router.
    ///   - space: where the disk guard reads free space (the real filesystem unless a test
    ///     scripts it to cross the high-water mark without filling a disk).
    ///   - directory: the data directory to run on, kept afterwards (the caller removes it): a
    ///     second run on it is the daemon restarted, and its files can be read once the run is
    ///     over. Without it, a fresh directory under `parent` that goes with the run.
    ///   - adjust: changes to the configuration (journal mirroring is off unless set here).
    ///   - hooks: the daemon's extra wiring (a journal mirror over a test sink, say).
    static func run(
        faults: any CommitFaultInjector = NoCommitFaults(), clock: any WallClock = SystemWallClock(), live: Bool = false,
        parent: URL = FileManager.default.temporaryDirectory, space: any FilesystemSpace = StatvfsFilesystemSpace(),
        directory: URL? = nil, adjust: @Sendable (inout ServerConfiguration) -> Void = { _ in },
        hooks: @Sendable (DaemonComponents, Logger) -> ApplicationHooks = { _, _ in ApplicationHooks() },
        _ test: @escaping @Sendable (IngestHarness) async throws -> Void
    ) async throws {
        let dir = directory ?? parent.appendingPathComponent("ingest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(at: dir) } }
        var configuration = ServerConfiguration()
        configuration.dataDirectory = dir
        configuration.journalMirror = false
        // Live: a real server on a port of its own, for streamed answers (follow) read as they come.
        if live { configuration.port = 0 }
        // The run's backend (`TestBackend`), so a contract suite in process covers ClickHouse too.
        if case .clickhouse(let url) = TestBackend.current {
            configuration.backend = .clickhouse
            configuration.clickhouse.urls = [url]
            configuration.clickhouse.database = TestBackend.uniqueDatabase()
            configuration.clickhouse.collectorID = 1
        }
        adjust(&configuration)
        let logger = Logger(label: "ingest-tests")
        let components = try DaemonComponents(
            configuration: configuration, clock: clock, metrics: PrometheusMetrics(), space: space,
            commitFaults: faults, logger: logger)
        let (_, admin) = try await components.tokens.create(name: "test admin", scopes: [.admin], apps: [], now: 0)
        let app = buildApplication(components: components, hooks: hooks(components, logger), logger: logger)
        // `.router` runs the application's services, so the group committer completes appends.
        try await app.test(live ? .live : .router) { client in
            try await test(IngestHarness(client: client, components: components, adminToken: admin))
        }
    }

    /// A token with only `ingest`, bound to `apps`.
    func ingestToken(boundTo apps: [String]) async throws -> String {
        try await components.tokens.create(name: "relay for \(apps.joined(separator: ","))", scopes: [.ingest], apps: apps, now: 0).secret
    }

    func post(
        _ uri: String, _ body: String, token: String? = nil, headers extra: HTTPFields = [:], contentType: String = "application/x-ndjson",
        method: HTTPRequest.Method = .post
    ) async throws -> Answer {
        try await post(uri, bytes: Array(body.utf8), token: token, headers: extra, contentType: contentType, method: method)
    }

    func post(
        _ uri: String, bytes: [UInt8], token: String? = nil, headers extra: HTTPFields = [:], contentType: String = "application/x-ndjson",
        method: HTTPRequest.Method = .post
    ) async throws -> Answer {
        var headers = extra
        headers[.contentType] = contentType
        if headers[HTTPField.Name("X-APIKey")!] == nil { headers[.authorization] = "Bearer \(token ?? adminToken)" }
        return try await client.execute(uri: uri, method: method, headers: headers, body: ByteBuffer(bytes: bytes)) { r in
            Answer(status: r.status, headers: r.headers, body: String(buffer: r.body))
        }
    }

    func get(_ uri: String) async throws -> [String: Any] {
        try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(adminToken)"]) { r in
            #expect(r.status == .ok, "\(uri): \(String(buffer: r.body))")
            return try JSONSerialization.jsonObject(with: Data(buffer: r.body)) as? [String: Any] ?? [:]
        }
    }

    /// Every stored record of `kind` ("events" or "logs") in `env` matching `query`, oldest first.
    func records(_ kind: String, env: String = "prod", _ query: String = "") async throws -> [[String: Any]] {
        let page = try await get("/v1/\(kind)?env=\(env)&limit=10000&order=asc\(query.isEmpty ? "" : "&" + query)")
        #expect(page["nextCursor"] is NSNull, "more than one page")
        return page[kind] as? [[String: Any]] ?? []
    }

    /// Every stored record of `kind` in every environment.
    func everywhere(_ kind: String, _ query: String = "") async throws -> [[String: Any]] {
        try await records(kind, env: "prod", query) + records(kind, env: "ppe", query)
    }
}
