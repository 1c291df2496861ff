import Foundation
import Testing

/// Requests the process suites send to a daemon (those the in-process suites send too are
/// ``TelemetryRequests``').
extension DaemonProcess {
    /// Creates a token through `POST /v1/tokens` (as the admin) and returns its secret.
    public func createToken(name: String, scopes: [String], apps: [String] = []) async throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["name": name, "scopes": scopes, "apps": apps] as [String: Any])
        let (status, answer, _) = try await post("/v1/tokens", body: [UInt8](body))
        #expect(status == 201, "\(String(decoding: answer, as: UTF8.self))")
        return try #require(parseJSON(answer)["token"] as? String)
    }
}
