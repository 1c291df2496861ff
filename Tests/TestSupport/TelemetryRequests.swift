import Foundation
import Testing

/// The requests log, diagnostics and query tests send, written once for both ways a test
/// reaches the daemon: a `DaemonProcess` over loopback and the in-process router harness.
/// A conformer sends one request as the admin (unless `headers` name another credential).
public protocol TelemetryRequests: Sendable {
    /// POSTs `bytes` to `path`: the status and the answer's bytes.
    func postBytes(_ path: String, _ bytes: [UInt8], headers: [(String, String)]) async throws -> (Int, [UInt8])
    /// GETs `path` and parses the JSON answer (a test failure unless 200).
    func getJSON(_ path: String) async throws -> [String: Any]
}

extension TelemetryRequests {
    /// POSTs a log body to `/v1/logs` and returns the status and the JSON answer.
    public func ingestLogs(
        _ body: String, query: String = "", contentType: String = "application/x-ndjson", headers: [(String, String)] = []
    ) async throws -> (Int, [String: Any]) {
        try await ingestLogs(bytes: Array(body.utf8), query: query, contentType: contentType, headers: headers)
    }

    public func ingestLogs(
        bytes: [UInt8], query: String, contentType: String, headers: [(String, String)] = []
    ) async throws -> (Int, [String: Any]) {
        let (status, answer) = try await postBytes("/v1/logs" + query, bytes, headers: [("Content-Type", contentType)] + headers)
        return (status, parseJSON(answer))
    }

    /// POSTs a diagnostic upload (`POST /v1/diagnostics`).
    public func diagnose(_ upload: [String: Any]) async throws -> (Int, [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: upload)
        let (status, answer) = try await postBytes("/v1/diagnostics", [UInt8](body), headers: [("Content-Type", "application/json")])
        return (status, parseJSON(answer))
    }

    /// Every log record matching `query` (a `/v1/logs` query string), oldest first.
    public func logRecords(_ query: String) async throws -> [[String: Any]] {
        let page = try await getJSON("/v1/logs?limit=10000&order=asc&\(query)")
        #expect(page["nextCursor"] is NSNull, "more than one page for \(query)")
        return page["logs"] as? [[String: Any]] ?? []
    }
}

extension DaemonProcess: TelemetryRequests {
    public func postBytes(_ path: String, _ bytes: [UInt8], headers: [(String, String)]) async throws -> (Int, [UInt8]) {
        let (status, answer, _) = try await post(path, body: bytes, headers: headers)
        return (status, answer)
    }

    public func getJSON(_ path: String) async throws -> [String: Any] { try await json(path) }
}
