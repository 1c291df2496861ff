import ControlState
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import StoreCore
import TelemetryModel
import TelemetryStore

@testable import TelemetryServer

/// The daemon's real router and components in-process, on a temporary data directory, with
/// one token per scope and the access log recorded: what the route-access tests attack.
struct AccessTestDaemon: Sendable {
    /// A caller: no token, an unknown token, or a real token with exactly these scopes.
    struct Credential: Sendable, CustomStringConvertible {
        var label: String
        var secret: String?
        var token: Token?
        var description: String { label }
    }

    /// How a request presents its credential's secret.
    enum Presentation: Sendable {
        /// `Authorization: Bearer <secret>`, accepted on every route that needs a token.
        case bearer
        /// The collector-style `X-APIKey: <secret>`, a credential on ingest routes only.
        case apiKey
    }

    let components: DaemonComponents
    /// The data directory the components run on (`control.sqlite` is here).
    let directory: URL
    let table: RouteTable
    let log: RecordingLogHandler.Box
    /// The router's own list of routes (`GET /v1/apps`), as Hummingbird reports it.
    let routed: [String]
    var credentials: [Credential] = []

    static func run(
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (AccessTestDaemon, any TestClientProtocol) async throws -> Void
    ) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = ServerConfiguration()
        configuration.dataDirectory = dir
        configuration.journalMirror = false
        configure(&configuration)
        let box = RecordingLogHandler.Box()
        var logger = RecordingLogHandler.logger(box, label: "access-tests")
        logger.logLevel = .debug
        let components = try DaemonComponents(
            configuration: configuration, clock: SystemWallClock(), metrics: PrometheusMetrics(), space: StatvfsFilesystemSpace(),
            logger: logger)
        let table = RouteTable()
        let router = buildRouter(components: components, hooks: .init(), logger: logger, routeTable: table)
        var daemon = AccessTestDaemon(
            components: components, directory: dir, table: table, log: box, routed: router.routes.map { "\($0.method) \($0.path)" })
        daemon.credentials = [
            Credential(label: "none"),
            Credential(label: "unknown", secret: "mamt_00000000_" + String(repeating: "0", count: 48)),
        ]
        for scope in Scope.allCases {
            let (token, secret) = try await components.tokens.create(name: "only-\(scope.rawValue)", scopes: [scope], apps: [], now: 0)
            daemon.credentials.append(Credential(label: scope.rawValue, secret: secret, token: token))
        }
        let (both, secret) = try await components.tokens.create(name: "read+pii", scopes: [.read, .pii], apps: [], now: 0)
        daemon.credentials.append(Credential(label: "read+pii", secret: secret, token: both))
        let app = Application(router: router, services: components.services, logger: logger)
        let ready = daemon
        try await app.test(.router) { client in try await body(ready, client) }
    }

    /// A request as sent and what the access check did with it.
    struct Outcome: CustomStringConvertible {
        var method: HTTPRequest.Method
        var uri: String
        var credential: Credential
        var status: Int
        /// The routes whose access check let this request through (zero or one).
        var granted: [RouteTable.Entry]
        var description: String { "\(method) \(uri) as \(credential): HTTP \(status), granted \(granted)" }
    }

    func send(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, as credential: Credential,
        presented: Presentation = .bearer
    ) async throws -> Outcome {
        _ = log.take()
        var headers: HTTPFields = [.contentType: "application/json"]
        if let secret = credential.secret {
            switch presented {
            case .bearer: headers[.authorization] = "Bearer \(secret)"
            case .apiKey: headers[HTTPField.Name("X-APIKey")!] = secret
            }
        }
        let status = try await client.execute(uri: uri, method: method, headers: headers, body: ByteBuffer(bytes: Self.body(for: uri))) {
            Int($0.status.code)
        }
        let granted = log.take().filter { $0.message == "access granted" }.compactMap { entry -> RouteTable.Entry? in
            let route = entry.metadata["route"] ?? ""
            guard let space = route.firstIndex(of: " ") else { return nil }
            return table.entry(method: HTTPRequest.Method(String(route[..<space]))!, path: String(route[route.index(after: space)...]))
        }
        return Outcome(method: method, uri: uri, credential: credential, status: status, granted: granted)
    }

    /// The secret of the token with exactly `label`'s scopes ("admin", "read", ...).
    func secret(_ label: String) -> String { credentials.first { $0.label == label }!.secret! }

    /// Whether `credential` satisfies `access`, decided here from the declaration alone, not
    /// by the middleware under test.
    static func allows(_ credential: Credential, _ access: RouteAccess) -> Bool {
        switch access {
        case .open: return true
        case .scope(let s): return credential.token?.allows(s) ?? false
        case .scopeUnlessOpened(let s, let isOpen): return isOpen() || (credential.token?.allows(s) ?? false)
        }
    }

    /// A body that would do damage if a handler accepted it: an admin token, a registry
    /// change, records to ingest.
    static func body(for uri: String) -> [UInt8] {
        if uri.lowercased().contains("token") { return Array(#"{"name":"escalated","scopes":["admin"]}"#.utf8) }
        if uri.lowercased().contains("apps") { return Array(#"{"telemetryDisabled":true}"#.utf8) }
        if uri.lowercased().contains("diagnostics") {
            return Array(#"{"appId":"com.contoso.a","description":"x","logs":[{"level":"info","message":"m"}]}"#.utf8)
        }
        return Array(#"{"name":"AppLaunch","appId":"com.contoso.a","level":"info","message":"m","data":{"managementType":"MDM"}}"#.utf8)
    }

    /// A concrete path for a route template: `{appId}` and `{id}` filled with sample values.
    static func concrete(_ template: String) -> String {
        template.replacingOccurrences(of: "{appId}", with: "com.contoso.matrix")
            .replacingOccurrences(of: "{id}", with: "MAM-AAAA-AAAA")
    }
}
