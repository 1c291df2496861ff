import Foundation
import HTTPTypes
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// `GET /v1/incidents` (issue 24): newest first by arrival, paged by cursor without gaps or
/// repeats (ties in arrival time included), filtered by window, app and device (typed
/// forgivingly), PPE apart, and the user's words withheld without `pii`.
@Suite struct IncidentListTests {
    static let t0 = Timestamp.parse("2026-11-26T08:00:00Z")!

    struct Upload {
        var app: String
        var device: String
        var at: Int64
        var ppe: Bool
        var id = ""
    }

    func get(_ h: IngestHarness, _ uri: String, token: String? = nil) async throws -> IngestHarness.Answer {
        try await h.client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token ?? h.adminToken)"]) { r in
            IngestHarness.Answer(status: r.status, headers: r.headers, body: String(buffer: r.body))
        }
    }

    @Test(arguments: 0..<3) func pagesAreNewestFirstWithoutGapsOrRepeats(seed: UInt64) async throws {
        let clock = SettableClock(Self.t0)
        try await IngestHarness.run(clock: clock) { h in
            var random = SeededRandom(seed: 0x1C1D + seed)
            var uploads: [Upload] = []
            for _ in 0..<(20 + random.below(20)) {
                var u = Upload(
                    app: random.pick(["com.contoso.mail", "com.contoso.files"]), device: random.pick(["DEV-A1", "dev-b2", "dev-c3"]),
                    at: Self.t0 + Int64(random.below(6)) * 3_600_000, ppe: random.below(6) == 0)
                clock.set(u.at)
                let body: [String: Any] = [
                    "appId": u.app, "deviceId": u.device, "identity": "Jane@Contoso.com",
                    "description": "Mail stopped syncing\nsecond line jane@contoso.com", "settings": ["MAMTelemetryUsePPE": u.ppe],
                    "logs": [["level": "error", "message": "sync failed", "time": Timestamp.format(milliseconds: u.at)]],
                ]
                let answer = try await h.post(
                    "/v1/diagnostics", String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self),
                    contentType: "application/json")
                #expect(answer.status == .created, "\(answer.body)")
                u.id = try #require((answer.json["incident"] as? [String: Any])?["id"] as? String)
                uploads.append(u)
            }
            for (filter, keep) in [
                ("", { (u: Upload) in !u.ppe }), ("&app=com.contoso.files", { !$0.ppe && $0.app == "com.contoso.files" }),
                ("&device=dev-a1", { !$0.ppe && $0.device == "DEV-A1" }), ("&env=ppe", { $0.ppe }),
                (
                    "&since=\(Timestamp.format(milliseconds: Self.t0 + 3_600_000))&until=\(Timestamp.format(milliseconds: Self.t0 + 3 * 3_600_000))",
                    { !$0.ppe && $0.at >= Self.t0 + 3_600_000 && $0.at <= Self.t0 + 3 * 3_600_000 }
                ),
            ] as [(String, (Upload) -> Bool)] {
                let expected = uploads.filter(keep).sorted { ($0.at, $0.id) > ($1.at, $1.id) }.map(\.id)
                var seen: [String] = []
                var cursor: String?
                repeat {
                    let page = try await get(h, "/v1/incidents?limit=3\(filter)" + (cursor.map { "&cursor=\($0)" } ?? "")).json
                    let incidents = try #require(page["incidents"] as? [[String: Any]], "\(page)")
                    #expect(incidents.count <= 3)
                    seen += incidents.compactMap { $0["id"] as? String }
                    cursor = page["nextCursor"] as? String
                } while cursor != nil && seen.count <= uploads.count
                #expect(seen == expected, "filter '\(filter)'")
            }
            let first = try #require((try await get(h, "/v1/incidents?limit=1").json["incidents"] as? [[String: Any]])?.first)
            #expect(first["records"] as? Int == 1 && first["appId"] is String && first["createdAt"] is String)
            #expect(first["description"] as? String == "Mail stopped syncing" && first["descriptionWithheld"] as? Bool == false)
            #expect(try await get(h, "/v1/incidents?cursor=bogus").status == .badRequest)
            // The last page says so: nextCursor is there, and null.
            #expect(try await get(h, "/v1/incidents?env=ppe&since=-1s").body.contains(#""nextCursor":null"#))
            #expect(try await get(h, "/v1/incidents?limit=0").status == .badRequest)
        }
    }

    @Test func withoutPIITheUsersWordsAndIdentityStayHidden() async throws {
        try await IngestHarness.run { h in
            let body =
                #"{"appId":"com.contoso.mail","deviceId":"dev-1","identity":"Jane@Contoso.com","description":"jane@contoso.com cannot sign in"}"#
            #expect(try await h.post("/v1/diagnostics", body, contentType: "application/json").status == .created)
            let read = try await h.components.tokens.create(name: "reader", scopes: [.read], apps: [], now: 0).secret
            let answer = try await get(h, "/v1/incidents", token: read)
            #expect(answer.status == .ok)
            #expect(!answer.body.lowercased().contains("jane"), "\(answer.body)")
            let incident = try #require((answer.json["incidents"] as? [[String: Any]])?.first)
            #expect(incident["descriptionWithheld"] as? Bool == true)
            #expect((incident["description"] as? String)?.hasPrefix("[withheld") == true)
            #expect((incident["identity"] as? String)?.hasPrefix("user-") == true)
            // The incident itself says so too, and with pii shows the words.
            let id = try #require(incident["id"] as? String)
            let detail = try await get(h, "/v1/incidents/\(id)", token: read).json
            #expect(detail["descriptionWithheld"] as? Bool == true && (detail["description"] as? String)?.hasPrefix("[withheld") == true)
            let full = try await get(h, "/v1/incidents/\(id)").json
            #expect(full["descriptionWithheld"] as? Bool == false && full["description"] as? String == "jane@contoso.com cannot sign in")
        }
    }
}
