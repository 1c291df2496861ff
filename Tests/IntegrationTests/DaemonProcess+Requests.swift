import Foundation
import TestSupport
import Testing

/// Requests the log, follow, incident, journald and CLI suites send to a daemon process.
extension DaemonProcess {
    /// POSTs a log body to `/v1/logs` and returns the status and the JSON answer.
    func ingestLogs(
        _ body: String, query: String = "", contentType: String = "application/x-ndjson", headers: [(String, String)] = []
    ) async throws -> (Int, [String: Any]) {
        try await ingestLogs(bytes: Array(body.utf8), query: query, contentType: contentType, headers: headers)
    }

    func ingestLogs(
        bytes: [UInt8], query: String, contentType: String, headers: [(String, String)] = []
    ) async throws -> (Int, [String: Any]) {
        let (status, answer, _) = try await post("/v1/logs" + query, body: bytes, headers: [("Content-Type", contentType)] + headers)
        return (status, parseJSON(answer))
    }

    /// POSTs a diagnostic upload (`POST /v1/diagnostics`).
    func diagnose(_ upload: [String: Any]) async throws -> (Int, [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: upload)
        let (status, answer, _) = try await post("/v1/diagnostics", body: [UInt8](body), headers: [("Content-Type", "application/json")])
        return (status, parseJSON(answer))
    }

    /// Every log record matching `query` (a `/v1/logs` query string), oldest first.
    func logRecords(_ query: String) async throws -> [[String: Any]] {
        let page = try await json("/v1/logs?limit=10000&order=asc&\(query)")
        #expect(page["nextCursor"] is NSNull, "more than one page for \(query)")
        return page["logs"] as? [[String: Any]] ?? []
    }

    /// Creates a token through `POST /v1/tokens` (as the admin) and returns its secret.
    func createToken(name: String, scopes: [String], apps: [String] = []) async throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["name": name, "scopes": scopes, "apps": apps] as [String: Any])
        let (status, answer, _) = try await post("/v1/tokens", body: [UInt8](body))
        #expect(status == 201, "\(String(decoding: answer, as: UTF8.self))")
        return try #require(parseJSON(answer)["token"] as? String)
    }
}
