import Foundation
public import StoreCore

/// Why a request to ClickHouse failed, by the kind of failure an operator acts on
/// differently: the forwarder retries all of them, metrics count them by `kind`, and only
/// `unreachable` makes the client try the next endpoint (a timeout or a server error may
/// have done work there; the next attempt is a retry, which the schema makes harmless).
public enum ClickHouseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No endpoint accepted a connection (refused, no route, connect timeout, DNS).
    case unreachable(endpoint: String, detail: String)
    /// Connected, but the answer did not come within the request's deadline.
    case timeout(endpoint: String)
    /// The server answered with an error; `code` is ClickHouse's own exception code
    /// (`Code: 60` unknown table, `516`/`192`/`193` authentication), nil when the body
    /// held none.
    case server(endpoint: String, status: Int, code: Int?, message: String)
    /// The answer could not be understood (not what the query's format promises).
    case badResponse(endpoint: String, detail: String)

    /// The label value of the error metrics: `unreachable`, `timeout`, `server`, `bad_response`.
    public var kind: String {
        switch self {
        case .unreachable: "unreachable"
        case .timeout: "timeout"
        case .server: "server"
        case .badResponse: "bad_response"
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let e, let d): "ClickHouse at \(e) is unreachable: \(d)"
        case .timeout(let e): "ClickHouse at \(e) did not answer in time"
        case .server(let e, let status, let code, let message):
            "ClickHouse at \(e) answered \(status)" + (code.map { " (code \($0))" } ?? "") + ": \(message)"
        case .badResponse(let e, let d): "ClickHouse at \(e) answered something unreadable: \(d)"
        }
    }

    /// ClickHouse's exception code from an error body (`Code: 60, e.displayText() = ...`).
    static func exceptionCode(in body: String) -> Int? {
        guard let range = body.range(of: "Code: ") else { return nil }
        return Int(body[range.upperBound...].prefix { $0.isNumber })
    }
}

extension ClickHouseError: ClientDescribable {
    /// What a client may be told: the endpoint and the kind of failure, never ClickHouse's
    /// own message, which quotes the statement it failed on.
    public var clientDescription: String {
        switch self {
        case .unreachable(let e, _): "ClickHouse at \(e) is unreachable"
        case .timeout(let e): "ClickHouse at \(e) did not answer in time"
        case .server(let e, let status, let code, _): "ClickHouse at \(e) answered \(status)" + (code.map { " (code \($0))" } ?? "")
        case .badResponse(let e, _): "ClickHouse at \(e) answered something unreadable"
        }
    }
}
