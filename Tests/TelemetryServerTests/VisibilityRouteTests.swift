import Foundation
import HTTPTypes
import TestSupport
import Testing

@testable import TelemetryServer

/// What a caller without the `pii` scope sees of stored data (issue 11, item 2), in process
/// over the router and a real store: `GET /v1/logs` as JSON and NDJSON, follow streams as
/// NDJSON and server-sent events, and the incident view. Verbose text and incident
/// descriptions are withheld (not merely e-mail-scrubbed) and `contains=` cannot find what
/// the caller is not shown. Bundles and the pseudonym lookup are VisibilityBundleRouteTests;
/// the CLI's `pseudonym` command is IntegrationTests.ControlCLITests.
@Suite struct VisibilityRouteTests {
    static let upn = VisibilityFixture.upn
    static var marker: Regex<(Substring, Substring)> { VisibilityFixture.marker }
    static func verbose(_ message: String, device: String) -> String { VisibilityFixture.verbose(message, device: device) }
    static func leaks(_ text: String) -> [String] { VisibilityFixture.leaks(text) }

    /// One device's logs (a chatty verbose record among them), an incident, and tokens for
    /// a reader with and without `pii`, made through the token route.
    struct Setup: Sendable {
        let h: IngestHarness
        let device = "vis-\(UUID().uuidString.prefix(8))"
        var incident = ""
        var read = "", readPII = ""

        func get(_ path: String, token: String, accept: String = "application/json") async throws -> (Int, String) {
            let (status, body, _) = try await h.exchange(
                path, method: .get, headers: [("Authorization", "Bearer \(token)"), ("Accept", accept)])
            return (status, String(decoding: body, as: UTF8.self))
        }

        func logs(_ query: String, token: String) async throws -> [[String: Any]] {
            let (status, body) = try await get("/v1/logs?limit=1000&\(query)", token: token)
            #expect(status == 200, "\(body)")
            return parseJSON(Array(body.utf8))["logs"] as? [[String: Any]] ?? []
        }

        func createToken(name: String, scopes: [String]) async throws -> String {
            let body = try JSONSerialization.data(withJSONObject: ["name": name, "scopes": scopes, "apps": []] as [String: Any])
            let (status, answer, _) = try await h.exchange("/v1/tokens", method: .post, bytes: [UInt8](body))
            #expect(status == 201, "\(String(decoding: answer, as: UTF8.self))")
            return try #require(parseJSON(answer)["token"] as? String)
        }
    }

    /// Runs `body` on a fresh store holding the fixture; `live` serves on a port (follow).
    static func withSetup(live: Bool, _ body: @escaping @Sendable (Setup) async throws -> Void) async throws {
        try await IngestHarness.run(live: live) { h in
            var s = Setup(h: h)
            s.read = try await s.createToken(name: "reader", scopes: ["read"])
            s.readPII = try await s.createToken(name: "reader-pii", scopes: ["read", "pii"])
            s.incident = try await VisibilityFixture.store(device: s.device, through: h)
            try await body(s)
        }
    }

    @Test func queryAnswersWithholdVerboseTextAndContainsCannotProbeIt() async throws {
        try await Self.withSetup(live: false) { s in
            for accept in ["application/json", "application/x-ndjson"] {
                let (status, body) = try await s.get("/v1/logs?device=\(s.device)", token: s.read, accept: accept)
                #expect(status == 200)
                #expect(Self.leaks(body).isEmpty, "\(accept) answer shows \(Self.leaks(body)): \(body)")
                #expect(body.contains("policy check-in completed"), "non-verbose text stays readable")
                #expect(body.matches(of: Self.marker).count == 2, "message and the free field of the verbose record: \(body)")
            }
            let shown = try await s.logs("device=\(s.device)", token: s.read)
            let verbose = try #require(shown.first { $0["level"] as? String == "verbose" })
            #expect(verbose["component"] as? String == "MSAL" && verbose["deviceId"] as? String == s.device)
            let pseudonym = try #require(verbose["identity"] as? String)
            #expect(pseudonym.hasPrefix("user-"))

            // contains= matches what the caller is shown, nothing else.
            for probe in ["refresh", "Jane", "megan", "contoso.com"] {
                #expect(
                    try await s.logs("device=\(s.device)&contains=\(probe)", token: s.read).isEmpty, "contains=\(probe) found hidden text")
            }
            #expect(try await s.logs("device=\(s.device)&contains=refresh", token: s.readPII).count == 1)
            #expect(try await s.logs("device=\(s.device)&contains=megan", token: s.readPII).count == 3)
            #expect(try await s.logs("device=\(s.device)&contains=\(pseudonym)", token: s.read).count == 3)
            let digest = try #require((verbose["message"] as? String)?.firstMatch(of: Self.marker)?.1)
            #expect(try await s.logs("device=\(s.device)&contains=\(digest)", token: s.read).count == 1)

            // The pii holder sees the record as stored, except the credential, which is masked for
            // every caller (and cannot be probed with contains=).
            let raw = try await s.logs("device=\(s.device)", token: s.readPII).filter { $0["level"] as? String == "verbose" }
            let message = try #require(raw.first?["message"] as? String)
            #expect(message.wholeMatch(of: /Refreshing token for Jane Roe \(refresh_token=token-[0-9a-f]{24}\)/) != nil, "\(message)")
            #expect(try await s.logs("device=\(s.device)&contains=s3cr3t", token: s.readPII).isEmpty)
        }
    }

    @Test(arguments: [false, true])
    func followStreamsWithholdVerboseText(serverSentEvents: Bool) async throws {
        try await Self.withSetup(live: true) { s in
            let port = try #require(s.h.client.port)
            let stream = try await FollowClient.open(
                url: "http://127.0.0.1:\(port)/v1/logs?follow=true&device=\(s.device)", token: s.read, serverSentEvents: serverSentEvents)
            #expect(try await stream.waitFor(message: "policy check-in completed"))
            #expect(try await s.h.ingestLogs(Self.verbose("live: Jane Roe typed s3cr3t-value", device: s.device)).0 == 200)
            #expect(
                try await s.h.ingestLogs(
                    #"{"level":"warning","message":"live marker","appId":"com.contoso.mail","deviceId":"\#(s.device)"}"#
                ).0
                    == 200)
            #expect(try await stream.waitFor(message: "live marker", timeout: .seconds(5)))
            let text = stream.rawText
            try await stream.close()
            #expect(Self.leaks(text).isEmpty, "follow stream shows \(Self.leaks(text)): \(text)")
            let verbose = stream.records.filter { $0["level"] as? String == "verbose" }
            #expect(verbose.count == 2, "backlog and live verbose records: \(text)")
            #expect(verbose.allSatisfy { ($0["message"] as? String)?.wholeMatch(of: Self.marker) != nil })
        }
    }

    @Test func incidentViewWithholdsTheDescription() async throws {
        try await Self.withSetup(live: false) { s in
            let (status, body) = try await s.get("/v1/incidents/\(s.incident)", token: s.read)
            #expect(status == 200)
            #expect(Self.leaks(body).isEmpty, "incident view shows \(Self.leaks(body)): \(body)")
            let view = parseJSON(Array(body.utf8))
            #expect((view["description"] as? String)?.wholeMatch(of: Self.marker) != nil, "\(body)")
            #expect((view["identity"] as? String)?.hasPrefix("user-") == true)
            let raw = parseJSON(Array(try await s.get("/v1/incidents/\(s.incident)", token: s.readPII).1.utf8))
            #expect(raw["description"] as? String == "My boss Jane Roe says attachments fail")
        }
    }
}
