import AsyncHTTPClient
import ClientOptions
import Foundation
import NIOCore
import NIOHTTP1

/// A small HTTP client for the daemon's API. Errors carry the daemon's own
/// `{"error": {"message": ...}}` text, which is written to be read by a person.
struct DaemonClient {
    let options: ServerOptions

    struct Failure: Error, CustomStringConvertible {
        let status: Int
        let message: String
        var description: String { "daemon answered \(status): \(message)" }
    }

    func request(
        _ method: HTTPMethod, _ path: String, body: [UInt8]? = nil, contentType: String = "application/json",
        accept: String = "application/json"
    ) -> HTTPClientRequest {
        var r = HTTPClientRequest(url: options.url.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)
        r.method = method
        r.headers.add(name: "Accept", value: accept)
        if let t = options.resolvedToken { r.headers.add(name: "Authorization", value: "Bearer \(t)") }
        if let body {
            r.headers.add(name: "Content-Type", value: contentType)
            r.body = .bytes(ByteBuffer(bytes: body))
        }
        return r
    }

    /// Sends and collects the whole answer (up to 256 MiB), throwing on non-2xx.
    func send(_ request: HTTPClientRequest) async throws -> [UInt8] {
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(300))
        let body = try await response.body.collect(upTo: 256 << 20)
        let bytes = [UInt8](buffer: body)
        guard (200..<300).contains(response.status.code) else {
            throw Failure(status: Int(response.status.code), message: Self.errorMessage(bytes))
        }
        return bytes
    }

    static func errorMessage(_ bytes: [UInt8]) -> String {
        if let obj = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let err = obj["error"] as? [String: Any], let msg = err["message"] as? String
        {
            return msg
        }
        return String(decoding: bytes.prefix(500), as: UTF8.self)
    }
}

/// Builds `?a=b&c=d` from the options that were given.
func queryString(_ pairs: [(String, String?)]) -> String {
    var c = URLComponents()
    c.queryItems = pairs.compactMap { k, v in v.map { URLQueryItem(name: k, value: $0) } }
    return (c.queryItems?.isEmpty ?? true) ? "" : "?" + (c.percentEncodedQuery ?? "")
}
