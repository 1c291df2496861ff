import Compression
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TelemetryModel
import Testing

@testable import TelemetryServer

/// Every ingest route that takes console-export text reads it as entries (`TextExport`):
/// `POST /v1/logs` as `text/plain` (plain and compressed) and the `text` of a diagnostic
/// upload. The audit's export: a warning in the documented shape stored as `info` with
/// component `ComMail[512`, and a verbose entry's pasted HTTP response (a refresh token, a
/// phone number) stored as `info` records with the raw text and the receive time, shown to
/// a caller without `pii`.
@Suite struct TextExportRouteTests {
    static let export = """
        --- Intune diagnostics export ---
        2026-11-26T15:58:11Z [ComMail[512]] WARNING [MAMPolicyManager] No policy cached
        2026-11-26T15:58:12.250+01:00 [ComMail[512]] VERBOSE [MSAL] token response:
        HTTP/1.1 200 OK
        {"refresh_token":"0.AXoA-planted","phone":"+1 425 555 0100"}

        2026-11-26 15:58:13 ComMail[512:9921] <Error> [Enrollment] failed

        """

    /// What each route must store, in line order: (level, time, component, message).
    static let expected: [(String, String?, String?, String)] = [
        ("info", nil, nil, "--- Intune diagnostics export ---"),
        ("warning", "2026-11-26T15:58:11.000Z", "MAMPolicyManager", "No policy cached"),
        (
            "verbose", "2026-11-26T14:58:12.250Z", "MSAL",
            "token response:\nHTTP/1.1 200 OK\n{\"refresh_token\":\"0.AXoA-planted\",\"phone\":\"+1 425 555 0100\"}"
        ),
        ("error", "2026-11-26T15:58:13.000Z", "Enrollment", "failed"),
    ]

    @Test func everyTextRouteStoresOneRecordPerEntry() async throws {
        try await IngestHarness.run { h in
            let gzip = try Deflate.compress(Array(Self.export.utf8), format: .gzip)
            let uploads: [(String, IngestHarness.Answer)] = [
                ("text/plain", try await h.post("/v1/logs?app=com.contoso.mail&device=plain", Self.export, contentType: "text/plain")),
                (
                    "text/plain gzip",
                    try await h.post(
                        "/v1/logs?app=com.contoso.mail&device=gzip", bytes: gzip, headers: [.contentEncoding: "gzip"],
                        contentType: "text/plain; charset=utf-8")
                ),
                (
                    "diagnostics",
                    try await h.post(
                        "/v1/diagnostics",
                        String(
                            decoding: try JSONSerialization.data(withJSONObject: [
                                "appId": "com.contoso.mail", "deviceId": "upload", "text": Self.export,
                            ]), as: UTF8.self), contentType: "application/json")
                ),
            ]
            for (route, answer) in uploads {
                #expect(answer.status == .ok || answer.status == .created, "\(route): \(answer.body)")
                #expect(answer.accepted == Self.expected.count, "\(route): \(answer.body)")
            }
            for device in ["plain", "gzip", "upload"] {
                let records = try await h.records("logs", "device=\(device)")
                // Matched by line, not position: the store numbers a request's verbose records
                // after its other records.
                try #require(records.count == Self.expected.count, "\(device): \(records)")
                let received = try #require(records.first?["receivedAt"] as? String)
                for (level, time, component, message) in Self.expected {
                    // Credentials are masked for every caller, this one (with pii) included: the
                    // pasted response's refresh token is read back as a mask, the rest as sent.
                    let shown = message.replacingOccurrences(of: "0.AXoA-planted", with: "")
                    let record = try #require(
                        records.first { r in
                            let m = r["message"] as? String ?? ""
                            return m == message || (m.hasPrefix(shown.prefix(while: { $0 != "\"" })) && !m.contains("0.AXoA-planted"))
                        }, "\(device): \(message)")
                    #expect(record["level"] as? String == level, "\(device): \(record)")
                    #expect(record["time"] as? String == time ?? received, "\(device): \(record)")
                    #expect(record["component"] as? String == component, "\(device): \(record)")
                }
            }

            // A caller without `pii` sees the verbose entry withheld to its last line: nothing
            // of the pasted response, on any route.
            let (_, reader) = try await h.components.tokens.create(name: "support", scopes: [.read], apps: [], now: 0)
            let page = try await h.client.execute(
                uri: "/v1/logs?limit=100", method: .get, headers: [.authorization: "Bearer \(reader)"]
            ) { String(buffer: $0.body) }
            #expect(page.contains("No policy cached"), "\(page)")
            for planted in ["0.AXoA-planted", "425 555", "HTTP/1.1"] {
                #expect(!page.contains(planted), "\(planted) shown to a read-only caller: \(page)")
            }
        }
    }
}
