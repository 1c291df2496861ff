import Foundation
import HTTPTypes
import NIOCore
import TestSupport
import Testing

/// The requests the in-process ingest and query suites send, spelled like the ones the
/// process suites send to a `DaemonProcess` so a test reads the same in either.
extension IngestHarness {
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

extension IngestHarness: TelemetryRequests {
    func postBytes(_ path: String, _ bytes: [UInt8], headers: [(String, String)]) async throws -> (Int, [UInt8]) {
        let (status, answer, _) = try await exchange(path, method: .post, bytes: bytes, headers: headers)
        return (status, answer)
    }

    func getJSON(_ path: String) async throws -> [String: Any] { try await get(path) }
}
