import AsyncHTTPClient
import Compression
public import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import Synchronization

/// A small client for ClickHouse's HTTP interface: statements built with ``ClickHouseSQL``
/// (values bound, never concatenated), gzip on the wire where it pays
/// (``ClickHouseWireCompression``), basic authentication, several endpoints tried in order
/// when one cannot be reached, and every failure classified (``ClickHouseError``). It
/// remembers the endpoint that last answered and starts there.
///
/// Values are sent as server-side parameters when the server supports them (19.11 and
/// later, learned from `version()` on first use) and as escaped literals otherwise (18.16,
/// Debian's server, has no `{name:Type}` placeholders: `Unknown setting param_x`).
public final class ClickHouseClient: Sendable {
    public let configuration: ClickHouseConfiguration
    private let http: HTTPClient
    private let preferred = Mutex(0)
    private let parameterMode = Mutex<Bool?>(nil)
    private let observer: (@Sendable (ClickHouseExchange) -> Void)?

    /// `observer` (a test seam) is told every statement built with ``ClickHouseSQL`` that this
    /// client completed, with its answer: a test replays the daemon's own statements on
    /// another engine from it (scripts/clickhouse/modern.sh).
    public init(configuration: ClickHouseConfiguration, observer: (@Sendable (ClickHouseExchange) -> Void)? = nil) {
        precondition(!configuration.endpoints.isEmpty, "ClickHouse needs at least one endpoint")
        self.configuration = configuration
        self.observer = observer
        var http = HTTPClient.Configuration()
        http.timeout = .init(connect: .seconds(3), read: .seconds(configuration.requestTimeoutSeconds))
        // Gzipped answers (see `attempt`) are inflated here, within a bound so a broken proxy
        // cannot balloon memory.
        http.decompression = .enabled(limit: .ratio(200))
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
    }

    /// Closes the connections; call once, when the owner stops.
    public func shutdown() async throws {
        try await http.shutdown()
    }

    /// The server's `version()`, from the first endpoint that answers.
    public func serverVersion() async throws -> String {
        let body = try await send(sql: "SELECT version()", database: nil, settings: [], data: nil, parameters: [])
        return String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a statement (DDL, or a SELECT whose whole answer fits in memory) against
    /// `database` and returns the answer's bytes in the statement's `FORMAT`.
    public func execute(_ sql: ClickHouseSQL, database: String? = nil, settings: [(String, String)] = []) async throws -> [UInt8] {
        let (text, parameters) = try await render(sql)
        let answer = try await send(sql: text, database: database, settings: settings, data: nil, parameters: parameters)
        observer?(ClickHouseExchange(statement: sql, rows: nil, answer: answer))
        return answer
    }

    /// Runs a statement on one endpoint only, without failing over: schema set-up, which
    /// every endpoint (shard) of this collector must get.
    public func execute(_ sql: ClickHouseSQL, on endpoint: URL, database: String? = nil) async throws -> [UInt8] {
        let (text, parameters) = try await render(sql)
        let answer = try await send(sql: text, database: database, settings: [], data: nil, parameters: parameters, only: endpoint)
        observer?(ClickHouseExchange(statement: sql, rows: nil, answer: answer))
        return answer
    }

    /// Inserts `rows` (already in `format`, e.g. JSONEachRow) into `table` of `database`.
    /// `columns` names the columns a positional format's fields fill, in order (none: every
    /// column, in the table's order). Returns when ClickHouse acknowledged the insert.
    public func insert(
        into table: String, database: String, columns: [String] = [], format: StaticString, rows: [UInt8],
        settings: [(String, String)] = []
    ) async throws {
        let target: ClickHouseSQL = "\(identifier: database).\(identifier: table)"
        let statement: ClickHouseSQL =
            columns.isEmpty
            ? "INSERT INTO \(fragment: target) FORMAT \(identifier: format.description)"
            : "INSERT INTO \(fragment: target) (\(fragment: .joined(columns.map { "\(identifier: $0)" }, separator: ", "))) FORMAT \(identifier: format.description)"
        let answer = try await send(sql: statement.inlined(), database: database, settings: settings, data: rows, parameters: [])
        observer?(ClickHouseExchange(statement: statement, rows: rows, answer: answer))
    }

    private func render(_ sql: ClickHouseSQL) async throws -> (String, [(name: String, value: String)]) {
        if try await supportsParameters() { return sql.parameterized() }
        return (sql.inlined(), [])
    }

    /// Whether the server takes `{name:Type}` placeholders, learned once from `version()`.
    public func supportsParameters() async throws -> Bool {
        if let known = parameterMode.withLock({ $0 }) { return known }
        let supported = Self.versionSupportsParameters(try await serverVersion())
        parameterMode.withLock { $0 = supported }
        return supported
    }

    /// Server-side query parameters arrived in ClickHouse 19.11.
    static func versionSupportsParameters(_ version: String) -> Bool {
        let numbers = version.split(separator: ".").compactMap { Int($0) }
        guard numbers.count >= 2 else { return false }
        return (numbers[0], numbers[1]) >= (19, 11)
    }

    /// One HTTP request, tried on each endpoint in turn from the preferred one while they are
    /// unreachable. The SQL goes in the body, or for an insert in the URL with the rows as
    /// the body.
    private func send(
        sql: String, database: String?, settings: [(String, String)], data: [UInt8]?, parameters: [(name: String, value: String)],
        only: URL? = nil
    ) async throws -> [UInt8] {
        var query: [(String, String)] = []
        if let database { query.append(("database", database)) }
        query += settings
        query += parameters.map { ("param_\($0.name)", $0.value) }
        let body: [UInt8]
        if let data {
            query.append(("query", sql))
            body = data
        } else {
            body = Array(sql.utf8)
        }
        let endpoints = only.map { [$0] } ?? configuration.endpoints
        let start = only == nil ? preferred.withLock { $0 } : 0
        var lastError: ClickHouseError?
        for step in 0..<endpoints.count {
            let index = (start + step) % endpoints.count
            do {
                let answer = try await attempt(endpoints[index], query: query, body: body)
                if only == nil { preferred.withLock { $0 = index } }
                return answer
            } catch let error as ClickHouseError {
                guard case .unreachable = error else { throw error }
                lastError = error
            }
        }
        throw lastError ?? ClickHouseError.unreachable(endpoint: "-", detail: "no endpoint configured")
    }

    /// One request to one endpoint; the body and the answer are gzipped on the wire when the
    /// configuration's ``ClickHouseWireCompression`` says so for this endpoint.
    private func attempt(_ endpoint: URL, query plainQuery: [(String, String)], body plainBody: [UInt8]) async throws -> [UInt8] {
        let gzip = configuration.compression.compresses(endpoint)
        // Answers are asked for gzip-compressed with `enable_http_compression=1`.
        let query = gzip ? [("enable_http_compression", "1")] + plainQuery : plainQuery
        let body = gzip ? try Deflate.compress(plainBody, level: configuration.compressionLevel, format: .gzip) : plainBody
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) ?? URLComponents()
        if components.path.isEmpty { components.path = "/" }
        components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
        // `+` is a space to ClickHouse's URL decoder, as in HTML forms; URLComponents leaves it.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        let name = endpoint.absoluteString
        var request = HTTPClientRequest(url: components.string ?? name)
        request.method = .POST
        if gzip {
            request.headers.add(name: "Content-Encoding", value: "gzip")
            request.headers.add(name: "Accept-Encoding", value: "gzip")
        }
        if let user = configuration.user {
            let token = Data("\(user):\(configuration.password ?? "")".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(token)")
        }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .seconds(configuration.requestTimeoutSeconds))
        } catch {
            throw Self.classify(error, endpoint: name)
        }
        let bytes: [UInt8]
        do {
            bytes = [UInt8](buffer: try await response.body.collect(upTo: 1 << 30))
        } catch {
            throw Self.classify(error, endpoint: name)
        }
        guard response.status == .ok else {
            let message = String(decoding: bytes.prefix(2000), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw ClickHouseError.server(
                endpoint: name, status: Int(response.status.code), code: ClickHouseError.exceptionCode(in: message), message: message)
        }
        return bytes
    }

    /// Transport errors by kind: a read or overall deadline that passed is a timeout; any
    /// failure to connect or a connection lost before the answer is "unreachable".
    static func classify(_ error: any Error, endpoint: String) -> ClickHouseError {
        if let e = error as? ClickHouseError { return e }
        if let e = error as? HTTPClientError {
            if e == .deadlineExceeded || e == .readTimeout || e == .writeTimeout { return .timeout(endpoint: endpoint) }
            if e == .connectTimeout { return .unreachable(endpoint: endpoint, detail: "connect timed out") }
            if e == .bodyLengthMismatch { return .badResponse(endpoint: endpoint, detail: "\(e)") }
        }
        return .unreachable(endpoint: endpoint, detail: "\(error)")
    }
}

/// One statement a ``ClickHouseClient`` sent, as the binder built it, and the answer it got.
public struct ClickHouseExchange: Sendable {
    public var statement: ClickHouseSQL
    /// An insert's rows, in the statement's `FORMAT`; nil for any other statement.
    public var rows: [UInt8]?
    public var answer: [UInt8]
}
