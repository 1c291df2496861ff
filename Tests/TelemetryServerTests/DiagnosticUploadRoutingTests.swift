import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import TelemetryServer

/// A diagnostic upload is one incident in one environment: its records are stored where the
/// upload is routed, even when a record names another app the registry routes elsewhere
/// (found by schemathesis: such an upload was refused with 503 and stored nothing).
@Suite struct DiagnosticUploadRoutingTests {
    @Test func everyRecordOfAnUploadIsStoredInTheIncidentsEnvironment() async throws {
        try await IngestHarness.run { h in
            let registered = try await h.client.execute(
                uri: "/v1/apps/com.contoso.ppeonly", method: .put,
                headers: [.authorization: "Bearer \(h.adminToken)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"telemetryDisabled":false,"usePPE":true,"verboseLogging":false}"#)
            ) { r in r.status }
            #expect(registered == .ok)
            let body = #"""
                {"appId":"com.contoso.mail","deviceId":"dev-u","description":"mail will not open","logs":[
                {"level":"error","message":"own app line","time":"2026-11-26T10:00:00Z"},
                {"level":"warning","message":"other app line","appId":"com.contoso.ppeonly","time":"2026-11-26T10:00:01Z"}]}
                """#
            let answer = try await h.post("/v1/diagnostics", body, contentType: "application/json")
            #expect(answer.status == .created, "\(answer.body)")
            let id = try #require((answer.json["incident"] as? [String: Any])?["id"] as? String)
            let stored = try await h.records("logs", env: "prod", "incident=\(id)")
            #expect(stored.compactMap { $0["message"] as? String } == ["own app line", "other app line"])
            #expect(try await h.records("logs", env: "ppe").isEmpty)
        }
    }
}
