import Foundation
import HTTPTypes
import NIOCore
import Testing

/// The requests the in-process ingest and query suites send, spelled like the ones the
/// process suites send to a `DaemonProcess` so a test reads the same in either.
extension IngestHarness {
    /// POSTs a log body to `/v1/logs` and returns the status and the JSON answer.
    func ingestLogs(
        _ body: String, query: String = "", contentType: String = "application/x-ndjson", headers: [(String, String)] = []
    ) async throws -> (Int, [String: Any]) {
        try await ingestLogs(bytes: Array(body.utf8), query: query, contentType: contentType, headers: headers)
    }

    func ingestLogs(
        bytes: [UInt8], query: String, contentType: String, headers: [(String, String)] = []
    ) async throws -> (Int, [String: Any]) {
        let (status, answer, _) = try await send(
            "/v1/logs" + query, method: .post, bytes: bytes, headers: [("Content-Type", contentType)] + headers)
        return (status, answer)
    }

    /// POSTs a diagnostic upload (`POST /v1/diagnostics`).
    func diagnose(_ upload: [String: Any]) async throws -> (Int, [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: upload)
        let (status, answer, _) = try await send(
            "/v1/diagnostics", method: .post, bytes: [UInt8](body), headers: [("Content-Type", "application/json")])
        return (status, answer)
    }

    /// Every log record matching `query` (a `/v1/logs` query string), oldest first.
    func logRecords(_ query: String) async throws -> [[String: Any]] {
        let page = try await get("/v1/logs?limit=10000&order=asc&\(query)")
        #expect(page["nextCursor"] is NSNull, "more than one page for \(query)")
        return page["logs"] as? [[String: Any]] ?? []
    }

    /// Every event in `env` matching `extra` (`&name=value...`), oldest first, following cursors.
    func allEvents(env: String = "prod", extra: String = "") async throws -> [[String: Any]] {
        var out: [[String: Any]] = []
        var cursor: String?
        repeat {
            let page = try await get("/v1/events?env=\(env)&limit=10000&order=asc\(extra)" + (cursor.map { "&cursor=\($0)" } ?? ""))
            out += page["events"] as? [[String: Any]] ?? []
            cursor = page["nextCursor"] as? String
        } while cursor != nil
        return out
    }

    /// One request as the admin: the status, the JSON answer (empty if it is not JSON) and
    /// the response headers.
    func send(_ uri: String, method: HTTPRequest.Method, body: String = "", headers: [(String, String)] = []) async throws -> (
        status: Int, json: [String: Any], headers: HTTPFields
    ) {
        try await send(uri, method: method, bytes: Array(body.utf8), headers: headers)
    }

    func send(_ uri: String, method: HTTPRequest.Method, bytes: [UInt8], headers: [(String, String)]) async throws -> (
        status: Int, json: [String: Any], headers: HTTPFields
    ) {
        let (status, answer, fields) = try await exchange(uri, method: method, bytes: bytes, headers: headers)
        return (status, (try? JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any]) ?? [:], fields)
    }

    /// One request as the admin (unless `headers` name another credential): the status, the
    /// answer's bytes and its headers.
    func exchange(
        _ uri: String, method: HTTPRequest.Method = .post, bytes: [UInt8] = [], headers: [(String, String)] = []
    ) async throws -> (Int, [UInt8], HTTPFields) {
        var fields: HTTPFields = [.authorization: "Bearer \(adminToken)"]
        for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
        return try await client.execute(uri: uri, method: method, headers: fields, body: ByteBuffer(bytes: bytes)) { r in
            (Int(r.status.code), Array(buffer: r.body), r.headers)
        }
    }
}
