import Foundation
import TestSupport
import Testing

/// What a caller without the `pii` scope sees of stored data (issue 11, item 2), in the two
/// places checked against the built daemon: bundles (unpacked with unzip and tar) and the
/// pseudonym a `pii` token looks up, by route and by CLI, which is the one everyone else sees.
/// Queries, follow streams and the incident view are TelemetryServerTests.VisibilityRouteTests.
@Suite(.serialized) struct VisibilityTests {
    static let upn = VisibilityFixture.upn
    static var marker: Regex<(Substring, Substring)> { VisibilityFixture.marker }

    /// A daemon with one device's logs (a chatty verbose record among them), an incident,
    /// and tokens for each kind of caller.
    final class Setup: @unchecked Sendable {
        let d: DaemonProcess
        let device = "vis-\(UUID().uuidString.prefix(8))"
        var incident = ""
        var read = "", readPII = "", bundle = "", bundlePII = ""

        init() async throws {
            d = try DaemonProcess()
            try await d.start()
            read = try await d.createToken(name: "reader", scopes: ["read"])
            readPII = try await d.createToken(name: "reader-pii", scopes: ["read", "pii"])
            bundle = try await d.createToken(name: "support", scopes: ["bundle"])
            bundlePII = try await d.createToken(name: "support-pii", scopes: ["bundle", "pii"])
            incident = try await VisibilityFixture.store(device: device, through: d)
        }

        func get(_ path: String, token: String, accept: String = "application/json") async throws -> (Int, String) {
            let (status, body) = try await d.get(path, headers: [("Authorization", "Bearer \(token)"), ("Accept", accept)])
            return (status, String(decoding: body, as: UTF8.self))
        }

        func logs(_ query: String, token: String) async throws -> [[String: Any]] {
            let (status, body) = try await get("/v1/logs?limit=1000&\(query)", token: token)
            #expect(status == 200, "\(body)")
            return parseJSON(Array(body.utf8))["logs"] as? [[String: Any]] ?? []
        }
    }

    static func leaks(_ text: String) -> [String] { VisibilityFixture.leaks(text) }

    /// Every member of a device bundle and of an incident bundle, and the manifest's counts
    /// checked against the files.
    @Test func bundlesWithholdEverywhereAndCountWhatTheyDid() async throws {
        let s = try await Setup()
        defer { s.d.cleanUp() }
        for query in ["device=\(s.device)&format=tar.gz", "incident=\(s.incident)"] {
            let members = try await Self.bundle(s, query, token: s.bundle)
            for (name, bytes) in members {
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(Self.leaks(text).isEmpty, "\(name) of bundle \(query) shows \(Self.leaks(text))")
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
        let raw = try await Self.bundle(s, "device=\(s.device)", token: s.bundlePII)
        let logs = String(decoding: raw["logs.ndjson"] ?? [], as: UTF8.self)
        #expect(logs.contains("Jane Roe (refresh_token=token-") && !logs.contains("s3cr3t-value"))
    }

    /// The pseudonym a `pii` token looks up (route and CLI) is the identity a read token is shown.
    @Test func pseudonymLookupNeedsPIIAndMatchesWhatQueriesShow() async throws {
        let s = try await Setup()
        defer { s.d.cleanUp() }
        let shown = try #require(try await s.logs("device=\(s.device)", token: s.read).first?["identity"] as? String)
        let query = "/v1/pseudonyms?identity=" + (Self.upn.uppercased().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        #expect(try await s.get(query, token: s.read).0 == 403)
        #expect(try await s.get("/v1/pseudonyms", token: s.readPII).0 == 400)
        let (status, body) = try await s.get(query, token: s.readPII)
        #expect(status == 200, "\(body)")
        let answer = parseJSON(Array(body.utf8))
        #expect(answer["pseudonym"] as? String == shown)
        #expect(answer["journalMatch"] as? String == "MAM_IDENTITY_HASH=\(shown)")

        let cli = try BundleFleet.system(
            BundleFleet.cli.path, ["pseudonym", "megan.BOWEN@contoso.com", "--url", s.d.baseURL, "--token", s.readPII])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(cli.stdout == shown + "\n")
        #expect(cli.stderr.contains("MAM_IDENTITY_HASH=\(shown)"))
        let refused = try BundleFleet.system(BundleFleet.cli.path, ["pseudonym", Self.upn, "--url", s.d.baseURL, "--token", s.read])
        #expect(refused.status != 0 && refused.stderr.contains("pii"), "\(refused.stderr)")
    }

    static func bundle(_ s: Setup, _ query: String, token: String) async throws -> [String: [UInt8]] {
        let (status, bytes) = try await s.d.get("/v1/bundles?\(query)", headers: [("Authorization", "Bearer \(token)")])
        #expect(status == 200, "\(String(decoding: bytes.prefix(300), as: UTF8.self))")
        let path = s.d.dataDirectory.appendingPathComponent("b-\(UUID().uuidString).\(query.contains("tar.gz") ? "tar.gz" : "zip")")
        try Data(bytes).write(to: path)
        return try BundleFleet.unpack(path.path)
    }
}
