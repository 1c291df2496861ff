import Foundation
import Testing

/// What the incident suites (in process, and `mamtelemetryctl logs --incident` against a
/// daemon) store: one device's automatic logs before and after, a diagnostic upload of five
/// records (three structured, two in console text), and a second upload from the same device
/// whose record belongs to another incident.
public struct IncidentFixture: Sendable {
    /// The upload's messages in the order the device wrote them.
    public static let messages = ["incident one", "incident two", "incident three", "incident four", "incident five"]

    public let device: String
    public let id: String
    public let guid: String
    public let otherID: String

    public static func store(through requests: some TelemetryRequests) async throws -> IncidentFixture {
        let device = "inc-\(UUID().uuidString)"
        func automatic(_ message: String) async throws {
            let line = #"{"level":"error","message":"\#(message)","appId":"com.contoso.mail","deviceId":"\#(device)"}"#
            #expect(try await requests.ingestLogs(line).0 == 200)
        }
        try await automatic("automatic before")
        let (status, answer) = try await requests.diagnose([
            "appId": "com.contoso.mail", "deviceId": device, "sessionId": "sess-9",
            "identity": "Megan.Bowen@Contoso.com", "description": "attachments do not open",
            "logs": [
                ["time": "2026-11-21T10:00:00.000Z", "level": "verbose", "message": "incident one", "component": "Files"],
                ["time": "2026-11-21T10:00:01.000Z", "level": "warning", "message": "incident two"],
                ["time": "2026-11-21T10:00:02.000Z", "level": "error", "message": "incident three", "component": "Files"],
            ],
            "text": "2026-11-21T10:00:03.000Z [ERROR] [Viewer] incident four\n2026-11-21T10:00:04.000Z incident five",
        ])
        #expect(status == 201, "\(answer)")
        #expect(answer["accepted"] as? Int == 5)
        let incident = try #require(answer["incident"] as? [String: Any])
        let (_, other) = try await requests.diagnose([
            "appId": "com.contoso.mail", "deviceId": device, "logs": [["level": "error", "message": "other incident"]],
        ])
        try await automatic("automatic after")
        return IncidentFixture(
            device: device, id: try #require(incident["id"] as? String), guid: try #require(incident["guid"] as? String),
            otherID: try #require((other["incident"] as? [String: Any])?["id"] as? String))
    }

    /// Stores an upload from an app that tests against PPE; returns its incident id.
    public static func storePPE(through requests: some TelemetryRequests) async throws -> String {
        let (status, answer) = try await requests.diagnose([
            "appId": "com.contoso.mail", "deviceId": "ppe-dev", "settings": ["MAMTelemetryUsePPE": true],
            "logs": [["level": "error", "message": "ppe incident"]],
        ])
        #expect(status == 201)
        return try #require((answer["incident"] as? [String: Any])?["id"] as? String)
    }
}
