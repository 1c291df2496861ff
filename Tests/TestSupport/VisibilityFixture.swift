import Foundation
import Testing

/// What the visibility suites (in process, and over a daemon for bundles and the CLI) store
/// and look for: one device's logs with a chatty verbose record among them, a diagnostic
/// upload whose description names people, and the text only a `pii` holder may see.
public enum VisibilityFixture {
    public static let upn = "Megan.Bowen@Contoso.com"
    /// Text that may only reach a `pii` holder: a name, a refresh token, the description.
    public static let secrets = ["Jane Roe", "refresh_token", "s3cr3t-value", "boss", "megan.bowen"]
    public static var marker: Regex<(Substring, Substring)> { /\[withheld: [0-9]+ chars, (text-[0-9a-f]{24})\]/ }

    public static func verbose(_ message: String, device: String) -> String {
        let object: [String: Any] = [
            "level": "verbose", "message": message, "component": "MSAL", "details": "asked by Jane Roe",
            "appId": "com.contoso.mail", "deviceId": device, "identity": upn,
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    public static func leaks(_ text: String) -> [String] {
        secrets.filter { text.lowercased().contains($0.lowercased()) }
    }

    /// Stores the device's logs and its diagnostic upload; returns the incident id.
    public static func store(device: String, through requests: some TelemetryRequests) async throws -> String {
        let logs = [
            verbose("Refreshing token for Jane Roe (refresh_token=s3cr3t-value)", device: device),
            #"{"level":"info","message":"policy check-in completed","appId":"com.contoso.mail","deviceId":"\#(device)","identity":"\#(upn)"}"#,
        ]
        #expect(try await requests.ingestLogs(logs.joined(separator: "\n")).0 == 200)
        let (status, answer) = try await requests.diagnose([
            "appId": "com.contoso.mail", "deviceId": device, "identity": upn,
            "description": "My boss Jane Roe says attachments fail",
            "logs": [["level": "error", "message": "attachment viewer crashed"]],
        ])
        #expect(status == 201)
        return try #require((answer["incident"] as? [String: Any])?["id"] as? String)
    }
}
