import Foundation
import TestSupport
import Testing

/// What a caller without the `pii` scope sees of stored data, over every path the built
/// daemon offers (issue 11, item 2): `GET /v1/logs` as JSON and NDJSON, follow streams as
/// NDJSON and server-sent events, the incident view and a bundle. Verbose text and incident
/// descriptions are withheld (not merely e-mail-scrubbed), `contains=` cannot find what the
/// caller is not shown, and the pseudonym a `pii` token looks up is the one everyone else sees.
@Suite(.serialized) struct VisibilityTests {
    static let upn = "Megan.Bowen@Contoso.com"
    /// Text that may only reach a `pii` holder: a name, a refresh token, the description.
    static let secrets = ["Jane Roe", "refresh_token", "s3cr3t-value", "boss", "megan.bowen"]
    static var marker: Regex<(Substring, Substring)> { /\[withheld: [0-9]+ chars, (text-[0-9a-f]{24})\]/ }

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
            let logs = [
                VisibilityTests.verbose("Refreshing token for Jane Roe (refresh_token=s3cr3t-value)", device: device),
                #"{"level":"info","message":"policy check-in completed","appId":"com.contoso.mail","deviceId":"\#(device)","identity":"\#(VisibilityTests.upn)"}"#,
            ]
            #expect(try await d.ingestLogs(logs.joined(separator: "\n")).0 == 200)
            let (status, answer) = try await d.diagnose([
                "appId": "com.contoso.mail", "deviceId": device, "identity": VisibilityTests.upn,
                "description": "My boss Jane Roe says attachments fail",
                "logs": [["level": "error", "message": "attachment viewer crashed"]],
            ])
            #expect(status == 201)
            incident = try #require((answer["incident"] as? [String: Any])?["id"] as? String)
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

    static func verbose(_ message: String, device: String) -> String {
        let object: [String: Any] = [
            "level": "verbose", "message": message, "component": "MSAL", "details": "asked by Jane Roe",
            "appId": "com.contoso.mail", "deviceId": device, "identity": upn,
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func leaks(_ text: String) -> [String] {
        secrets.filter { text.lowercased().contains($0.lowercased()) }
    }

    @Test func queryAnswersWithholdVerboseTextAndContainsCannotProbeIt() async throws {
        let s = try await Setup()
        defer { s.d.cleanUp() }
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
            #expect(try await s.logs("device=\(s.device)&contains=\(probe)", token: s.read).isEmpty, "contains=\(probe) found hidden text")
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

    @Test(arguments: [false, true])
    func followStreamsWithholdVerboseText(serverSentEvents: Bool) async throws {
        let s = try await Setup()
        defer { s.d.cleanUp() }
        let stream = try await FollowClient.open(
            s.d, query: "follow=true&device=\(s.device)", serverSentEvents: serverSentEvents, token: s.read)
        #expect(try await stream.waitFor(message: "policy check-in completed"))
        #expect(try await s.d.ingestLogs(Self.verbose("live: Jane Roe typed s3cr3t-value", device: s.device)).0 == 200)
        #expect(
            try await s.d.ingestLogs(#"{"level":"warning","message":"live marker","appId":"com.contoso.mail","deviceId":"\#(s.device)"}"#).0
                == 200)
        #expect(try await stream.waitFor(message: "live marker", timeout: .seconds(5)))
        let text = stream.rawText
        try await stream.close()
        #expect(Self.leaks(text).isEmpty, "follow stream shows \(Self.leaks(text)): \(text)")
        let verbose = stream.records.filter { $0["level"] as? String == "verbose" }
        #expect(verbose.count == 2, "backlog and live verbose records: \(text)")
        #expect(verbose.allSatisfy { ($0["message"] as? String)?.wholeMatch(of: Self.marker) != nil })
    }

    @Test func incidentViewWithholdsTheDescription() async throws {
        let s = try await Setup()
        defer { s.d.cleanUp() }
        let (status, body) = try await s.get("/v1/incidents/\(s.incident)", token: s.read)
        #expect(status == 200)
        #expect(Self.leaks(body).isEmpty, "incident view shows \(Self.leaks(body)): \(body)")
        let view = parseJSON(Array(body.utf8))
        #expect((view["description"] as? String)?.wholeMatch(of: Self.marker) != nil, "\(body)")
        #expect((view["identity"] as? String)?.hasPrefix("user-") == true)
        let raw = parseJSON(Array(try await s.get("/v1/incidents/\(s.incident)", token: s.readPII).1.utf8))
        #expect(raw["description"] as? String == "My boss Jane Roe says attachments fail")
    }

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
