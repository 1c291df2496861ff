import Foundation
import TestSupport
import Testing

@testable import TelemetryServer

/// What a caller without the `pii` scope sees of stored data, in the two places
/// VisibilityRouteTests does not look: every member of a bundle (read with the system's
/// `unzip` and `tar`), with the manifest's redaction counts checked against the files, and
/// the pseudonym lookup a `pii` holder uses to name a user the way everyone else sees them.
/// The CLI's `pseudonym` command is IntegrationTests.ControlCLITests.
@Suite struct VisibilityBundleRouteTests {
    static var marker: Regex<(Substring, Substring)> { VisibilityFixture.marker }

    @Test func bundlesWithholdEverywhereAndCountWhatTheyDid() async throws {
        try await VisibilityRouteTests.withSetup(live: false) { s in
            let bundle = try await s.createToken(name: "support", scopes: ["bundle"])
            let bundlePII = try await s.createToken(name: "support-pii", scopes: ["bundle", "pii"])
            for query in ["device=\(s.device)&format=tar.gz", "incident=\(s.incident)"] {
                let members = try await s.h.bundle(query, token: bundle).members
                for (name, bytes) in members {
                    let leaks = VisibilityFixture.leaks(String(decoding: bytes, as: UTF8.self))
                    #expect(leaks.isEmpty, "\(name) of bundle \(query) shows \(leaks)")
                }
                let redaction = parseJSON(members["manifest.json"] ?? [])["redaction"] as? [String: Any] ?? [:]
                let byFile = redaction["byFile"] as? [String: [String: Int]] ?? [:]
                #expect(!byFile.isEmpty)
                for (name, counts) in byFile {
                    let text = String(decoding: members[name] ?? [], as: UTF8.self)
                    #expect(counts["textWithheld"] == text.matches(of: Self.marker).count, "\(name) of \(query)")
                    #expect(counts["upn"] == text.matches(of: /user-[0-9a-f]{24}/).count, "\(name) of \(query)")
                }
                let logs = String(decoding: members["logs.ndjson"] ?? [], as: UTF8.self)
                #expect(
                    redaction["verboseMessagesScrubbed"] as? Int
                        == logs.split(separator: "\n").filter { $0.contains("\"level\":\"verbose\"") }.count)
            }
            let raw = try await s.h.bundle("device=\(s.device)", token: bundlePII).members
            let logs = String(decoding: raw["logs.ndjson"] ?? [], as: UTF8.self)
            #expect(logs.contains("Jane Roe (refresh_token=token-") && !logs.contains("s3cr3t-value"))
        }
    }

    /// The pseudonym a `pii` token looks up is the identity a read token is shown.
    @Test func pseudonymLookupNeedsPIIAndMatchesWhatQueriesShow() async throws {
        try await VisibilityRouteTests.withSetup(live: false) { s in
            let shown = try #require(try await s.logs("device=\(s.device)", token: s.read).first?["identity"] as? String)
            let upn = VisibilityFixture.upn.uppercased().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let query = "/v1/pseudonyms?identity=" + upn
            #expect(try await s.get(query, token: s.read).0 == 403)
            #expect(try await s.get("/v1/pseudonyms", token: s.readPII).0 == 400)
            let (status, body) = try await s.get(query, token: s.readPII)
            #expect(status == 200, "\(body)")
            let answer = parseJSON(Array(body.utf8))
            #expect(answer["pseudonym"] as? String == shown)
            #expect(answer["journalMatch"] as? String == "MAM_IDENTITY_HASH=\(shown)")
        }
    }
}
