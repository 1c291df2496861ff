import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// Every route × every credential (SPEC §8, issue 7): no token and an unknown token get 401
/// on protected routes, a token lacking the route's scope gets 403, one holding it (or
/// admin) gets through. Also app binding, `X-APIKey`, PII redaction, revocation and hashed
/// storage of secrets.
@Suite(.serialized) struct ScopeMatrixTests {
    /// A route and the scope it declares; `scope` nil means open.
    struct Route: CustomStringConvertible {
        var method: HTTPMethod
        var path: String
        var scope: String?
        var body: [UInt8]? = nil
        var description: String { "\(method) \(path)" }
    }

    static let upn = "Jane.Doe@Contoso.com"

    static func event(app: String, id: String) -> String {
        #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"dev-1","identity":"\#(upn)","sessionId":"s1","eventId":"\#(id)","data":{"operation":"enroll","statusCode":100,"durationMs":120}}"#
    }

    static func diagnostic(app: String) -> [UInt8] {
        Array(
            #"{"appId":"\#(app)","deviceId":"dev-1","identity":"\#(upn)","description":"cannot open attachments","logs":[{"level":"error","message":"sign-in failed for \#(upn)","identity":"\#(upn)"}]}"#
                .utf8)
    }

    /// Every route registered by the routers in `Routes/*.swift` and `Auth/TokenRoutes.swift`,
    /// with the scope it declares at registration. Ids in paths are real where it matters.
    static func routes(incident: String) -> [Route] {
        [
            Route(method: .GET, path: "/healthz", scope: nil),
            Route(method: .GET, path: "/readyz", scope: nil),
            Route(method: .GET, path: "/openapi.yaml", scope: nil),
            Route(method: .GET, path: "/metrics", scope: nil),
            Route(method: .GET, path: "/console/", scope: nil),
            Route(method: .GET, path: "/console/app.js", scope: nil),
            Route(method: .GET, path: "/v1/whoami", scope: "read"),
            Route(
                method: .POST, path: "/v1/telemetry", scope: "ingest", body: Array(event(app: "com.contoso.a", id: UUID().uuidString).utf8)),
            Route(
                method: .POST, path: "/v1/logs?app=com.contoso.a", scope: "ingest", body: Array(#"{"level":"info","message":"hello"}"#.utf8)
            ),
            Route(method: .POST, path: "/v1/diagnostics", scope: "ingest", body: diagnostic(app: "com.contoso.a")),
            Route(method: .GET, path: "/v1/events", scope: "read"),
            Route(method: .GET, path: "/v1/logs", scope: "read"),
            Route(method: .GET, path: "/v1/incidents/\(incident)", scope: "read"),
            Route(method: .GET, path: "/v1/stats/enrollment", scope: "read"),
            Route(method: .GET, path: "/v1/stats/launches", scope: "read"),
            Route(method: .GET, path: "/v1/stats/actions", scope: "read"),
            Route(method: .GET, path: "/v1/stats/drops", scope: "read"),
            Route(method: .POST, path: "/v1/stats/rollups/rebuild?env=ppe", scope: "admin"),
            Route(method: .GET, path: "/v1/pseudonyms?identity=jane%40contoso.com", scope: "pii"),
            Route(method: .GET, path: "/v1/bundles?app=com.contoso.a", scope: "bundle"),
            Route(method: .GET, path: "/v1/incidents/\(incident)/bundle", scope: "bundle"),
            Route(method: .GET, path: "/v1/apps", scope: "admin"),
            Route(method: .PUT, path: "/v1/apps/com.contoso.matrix", scope: "admin", body: Array(#"{"telemetryDisabled":false}"#.utf8)),
            Route(method: .DELETE, path: "/v1/apps/com.contoso.matrix", scope: "admin"),
            Route(method: .GET, path: "/v1/tokens", scope: "admin"),
            Route(method: .POST, path: "/v1/tokens", scope: "admin", body: Array(#"{"name":"matrix-made","scopes":["read"]}"#.utf8)),
            Route(method: .DELETE, path: "/v1/tokens/ffffffff", scope: "admin"),
        ]
    }

    @Test func everyRouteTimesEveryCredential() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let incident = try await Self.createIncident(d)
        var tokens: [String: String] = [:]
        for scope in ["ingest", "read", "bundle", "pii", "admin"] {
            tokens[scope] = try await Self.createToken(d, name: "only-\(scope)", scopes: [scope])
        }
        let credentials: [(String, String?)] =
            [("none", nil), ("bad", "mamt_00000000_" + String(repeating: "0", count: 48))]
            + tokens.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var checked = 0
        for route in Self.routes(incident: incident) {
            for (label, secret) in credentials {
                let status = try await Self.send(
                    d, route.method, route.path, body: route.body ?? [], authorization: secret.map { "Bearer \($0)" })
                let expected: String
                if route.scope == nil {
                    expected = "allowed"
                } else if secret == nil || label == "bad" {
                    expected = "401"
                } else if label == route.scope || label == "admin" {
                    expected = "allowed"
                } else {
                    expected = "403"
                }
                let got = status == 401 ? "401" : status == 403 ? "403" : "allowed"
                #expect(got == expected, "\(route) with \(label) token: HTTP \(status), expected \(expected)")
                #expect(status < 500, "\(route) with \(label) token: HTTP \(status)")
                checked += 1
            }
        }
        #expect(checked == Self.routes(incident: incident).count * 7)
    }

    /// The outside audit's reproductions, against the built daemon over real HTTP: a `read`
    /// token tried to mint an admin token through `POST /v1//tokens`, edit and delete registry
    /// entries through `//v1/apps/{id}` and ingest through `POST /v1/telemetry/`. Each spelling
    /// first proves it reaches the route (an admin gets through), then that `read` cannot.
    /// The in-process attack over every spelling is `TelemetryServerTests/RouteAccessTests`.
    @Test func pathSpellingsDoNotTurnAReadTokenIntoAnAdmin() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let read = "Bearer " + (try await Self.createToken(d, name: "reader", scopes: ["read"]))
        let admin = "Bearer " + (d.adminToken ?? "")
        let mint = Array(#"{"name":"escalated","scopes":["admin"]}"#.utf8)
        let disable = Array(#"{"telemetryDisabled":true}"#.utf8)
        let attempts: [(HTTPMethod, String, [UInt8], reached: Int)] = [
            (.POST, "/v1//tokens", mint, 201),
            (.PUT, "//v1/apps/com.contoso.audit", disable, 200),
            (.DELETE, "//v1/apps/com.contoso.audit", [], 204),
            (.POST, "/v1/telemetry/", Array(Self.event(app: "com.contoso.a", id: "audit-1").utf8), 200),
        ]
        for (method, path, body, reached) in attempts {
            #expect(try await Self.send(d, method, path, body: body, authorization: read) == 403, "\(method) \(path) with a read token")
            #expect(
                try await Self.send(d, method, path, body: body, authorization: admin) == reached, "\(method) \(path) with the admin token")
        }
        // The only token named "escalated" is the one the admin made.
        let (_, list) = try await Self.exchange(d, .GET, "/v1/tokens")
        let tokens = (parseJSON(list)["tokens"] as? [[String: Any]] ?? []).filter { $0["name"] as? String == "escalated" }
        #expect(tokens.count == 1)
    }

    @Test func boundIngestTokenMayOnlyPostForItsApps() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let bound = try await Self.createToken(d, name: "app-a", scopes: ["ingest"], apps: ["com.contoso.a"])
        let auth = "Bearer \(bound)"
        // Only B's records: the request is refused.
        let onlyB = Array(Self.event(app: "com.contoso.b", id: "b-1").utf8)
        #expect(try await Self.send(d, .POST, "/v1/telemetry", body: onlyB, authorization: auth) == 403)
        // A's and B's mixed: A's kept, B's line rejected by name.
        let mixed = Array(
            [Self.event(app: "com.contoso.a", id: "a-1"), Self.event(app: "com.contoso.b", id: "b-2")].joined(separator: "\n").utf8)
        let (status, body) = try await Self.exchange(d, .POST, "/v1/telemetry", body: mixed, headers: [("Authorization", auth)])
        #expect(status == 200)
        let json = parseJSON(body)
        #expect(json["accepted"] as? Int == 1)
        let rejected = json["rejected"] as? [[String: Any]] ?? []
        #expect(rejected.count == 1 && rejected.first?["line"] as? Int == 2)
        let error = rejected.first?["error"] as? String
        #expect(error?.contains("com.contoso.b") == true, "\(rejected)")
        // Logs and diagnostic uploads for B are refused too.
        #expect(
            try await Self.send(
                d, .POST, "/v1/logs?app=com.contoso.b", body: Array(#"{"level":"info","message":"x"}"#.utf8), authorization: auth) == 403)
        #expect(try await Self.send(d, .POST, "/v1/diagnostics", body: Self.diagnostic(app: "com.contoso.b"), authorization: auth) == 403)
        #expect(try await Self.send(d, .POST, "/v1/diagnostics", body: Self.diagnostic(app: "com.contoso.a"), authorization: auth) == 201)
        // Nothing of B's was stored.
        #expect(try await d.allEvents(extra: "&app=com.contoso.b").isEmpty)
        #expect(try await d.allEvents(extra: "&app=com.contoso.a").count == 1)
    }

    @Test func apiKeyHeaderWorksForIngestOnly() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let ingest = try await Self.createToken(d, name: "collector", scopes: ["ingest"])
        let read = try await Self.createToken(d, name: "reader", scopes: ["read"])
        let body = Array(Self.event(app: "com.contoso.a", id: "k-1").utf8)
        let (status, _) = try await Self.exchange(d, .POST, "/v1/telemetry", body: body, headers: [("X-APIKey", ingest)])
        #expect(status == 200)
        // On a read route the header is not a credential, whatever the token may do.
        let (s2, _) = try await Self.exchange(d, .GET, "/v1/events", headers: [("X-APIKey", read)])
        #expect(s2 == 401)
        let (s3, _) = try await Self.exchange(d, .GET, "/v1/events", headers: [("X-APIKey", d.adminToken ?? "")])
        #expect(s3 == 401)
        // A bad X-APIKey on ingest is 401, like a bad bearer.
        let (s4, _) = try await Self.exchange(d, .POST, "/v1/telemetry", body: body, headers: [("X-APIKey", "mamt_00000000_00")])
        #expect(s4 == 401)
    }

    /// SPEC §8: "a read token cannot see PII". A read token without `pii` must not get the
    /// raw UPN from the query routes; one with `pii` gets it.
    @Test func readTokenWithoutPIISeesNoUPN() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let incident = try await Self.createIncident(d)
        let (s, _, _) = try await d.post("/v1/telemetry", body: Array(Self.event(app: "com.contoso.a", id: "pii-1").utf8))
        #expect(s == 200)
        let read = "Bearer " + (try await Self.createToken(d, name: "reader", scopes: ["read"]))
        let readPII = "Bearer " + (try await Self.createToken(d, name: "reader-pii", scopes: ["read", "pii"]))
        for path in ["/v1/events", "/v1/logs", "/v1/incidents/\(incident)"] {
            let (status, body) = try await Self.exchange(d, .GET, path, headers: [("Authorization", readPII)])
            #expect(status == 200)
            #expect(Self.holdsUPN(body), "\(path) with read+pii should show the UPN")
        }
        for path in ["/v1/events", "/v1/logs", "/v1/incidents/\(incident)"] {
            let (status, body) = try await Self.exchange(d, .GET, path, headers: [("Authorization", read)])
            #expect(status == 200)
            #expect(!Self.holdsUPN(body), "\(path) with a read token without pii returned the raw UPN")
        }
    }

    @Test func bundleIsRedactedWithoutPIIAndRawWithIt() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let incident = try await Self.createIncident(d)
        let bundle = "Bearer " + (try await Self.createToken(d, name: "support", scopes: ["bundle"]))
        let bundlePII = "Bearer " + (try await Self.createToken(d, name: "support-pii", scopes: ["bundle", "pii"]))
        let redacted = try await Self.bundleText(d, incident: incident, authorization: bundle)
        #expect(redacted.contains("sign-in failed"), "the bundle holds the incident's logs")
        #expect(!Self.holdsUPN(Array(redacted.utf8)), "bundle without pii holds the raw UPN")
        let raw = try await Self.bundleText(d, incident: incident, authorization: bundlePII)
        #expect(Self.holdsUPN(Array(raw.utf8)), "bundle with pii should hold the raw UPN")
    }

    @Test func revokedTokensAreRefusedAndSecretsAreNotStoredInPlainText() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let (status, body) = try await Self.exchange(
            d, .POST, "/v1/tokens", body: Array(#"{"name":"temp","scopes":["read"]}"#.utf8), headers: [])
        #expect(status == 201)
        let created = parseJSON(body)
        let secret = try #require(created["token"] as? String)
        let id = try #require((created["info"] as? [String: Any])?["id"] as? String)
        #expect(try await Self.send(d, .GET, "/v1/events", authorization: "Bearer \(secret)") == 200)
        // The listing never shows the secret.
        let (_, list) = try await Self.exchange(d, .GET, "/v1/tokens")
        #expect(!String(decoding: list, as: UTF8.self).contains(String(secret.split(separator: "_").last!)))
        #expect(try await Self.exchange(d, .DELETE, "/v1/tokens/\(id)").0 == 204)
        #expect(try await Self.send(d, .GET, "/v1/events", authorization: "Bearer \(secret)") == 401)
        // Still refused after a restart (revocation is persisted).
        d.stop()
        try await d.start()
        #expect(try await Self.send(d, .GET, "/v1/events", authorization: "Bearer \(secret)") == 401)
        // Neither the whole secret nor its secret part appears in any file of the data dir.
        let secretPart = Array(String(secret.split(separator: "_").last!).utf8)
        var searched = 0
        for case let url as URL in FileManager.default.enumerator(at: d.dataDirectory, includingPropertiesForKeys: nil)! {
            guard url.lastPathComponent.hasPrefix("control.sqlite"), let bytes = try? [UInt8](Data(contentsOf: url)) else { continue }
            searched += 1
            #expect(!Self.contains(bytes, secretPart), "\(url.lastPathComponent) holds the token secret in plain text")
        }
        #expect(searched >= 1, "control.sqlite was not found in the data directory")
    }

    @Test func ctlTokensCreateListRevoke() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let env = ["MAMTELEMETRY_URL": d.baseURL, "MAMTELEMETRY_TOKEN": d.adminToken ?? ""]
        let (c1, secret, err) = try Self.ctl(
            ["tokens", "create", "--name", "collector-a", "--scope", "ingest", "--scope", "read", "--app", "com.contoso.a"], env)
        #expect(c1 == 0, "\(err)")
        let token = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("mamt_"))
        #expect(err.contains("shown only now"))
        #expect(try await Self.send(d, .GET, "/v1/events", authorization: "Bearer \(token)") == 200)
        let (c2, table, _) = try Self.ctl(["tokens", "list"], env)
        #expect(c2 == 0)
        #expect(
            table.contains("collector-a") && table.contains("ingest,read") && table.contains("com.contoso.a") && table.contains("active"))
        #expect(!table.contains(String(token.split(separator: "_").last!)))
        let id = String(token.split(separator: "_")[1])
        let (c3, out, _) = try Self.ctl(["tokens", "revoke", id], env)
        #expect(c3 == 0 && out.contains("revoked \(id)"))
        #expect(try await Self.send(d, .GET, "/v1/events", authorization: "Bearer \(token)") == 401)
        let (_, after, _) = try Self.ctl(["tokens", "list"], env)
        #expect(after.contains("revoked"))
        let (c4, _, bad) = try Self.ctl(["tokens", "create", "--name", "x", "--scope", "everything"], env)
        #expect(c4 != 0 && bad.contains("unknown scope"))
        let (c5, _, denied) = try Self.ctl(["tokens", "list"], ["MAMTELEMETRY_URL": d.baseURL, "MAMTELEMETRY_TOKEN": "mamt_00000000_00"])
        #expect(c5 != 0 && denied.contains("401"))
    }

    // MARK: helpers

    static func holdsUPN(_ bytes: [UInt8]) -> Bool {
        String(decoding: bytes, as: UTF8.self).lowercased().contains(upn.lowercased())
    }

    static func contains(_ hay: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= hay.count, let first = needle.first else { return false }
        var i = 0
        while i <= hay.count - needle.count {
            if hay[i] == first && Array(hay[i..<(i + needle.count)]) == needle { return true }
            i += 1
        }
        return false
    }

    static func createToken(_ d: DaemonProcess, name: String, scopes: [String], apps: [String] = []) async throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["name": name, "scopes": scopes, "apps": apps] as [String: Any])
        let (status, answer, _) = try await d.post("/v1/tokens", body: [UInt8](body))
        #expect(status == 201, "\(String(decoding: answer, as: UTF8.self))")
        return try #require(parseJSON(answer)["token"] as? String)
    }

    static func createIncident(_ d: DaemonProcess) async throws -> String {
        let (status, answer, _) = try await d.post("/v1/diagnostics", body: diagnostic(app: "com.contoso.a"))
        #expect(status == 201, "\(String(decoding: answer, as: UTF8.self))")
        let json = parseJSON(answer)
        let id = (json["incident"] as? [String: Any])?["id"] as? String ?? json["incidentId"] as? String ?? json["incident"] as? String
        return try #require(id, "no incident id in \(json)")
    }

    /// The incident bundle as tar.gz, unpacked to one text.
    static func bundleText(_ d: DaemonProcess, incident: String, authorization: String) async throws -> String {
        let (status, body) = try await exchange(
            d, .GET, "/v1/incidents/\(incident)/bundle?format=tar.gz", headers: [("Authorization", authorization)])
        #expect(status == 200)
        let file = d.dataDirectory.appendingPathComponent("bundle-\(UUID().uuidString).tar.gz")
        try Data(body).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        p.arguments = ["-xzOf", file.path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self)
    }

    static func ctl(_ args: [String], _ env: [String: String]) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = DaemonProcess.packageRoot.appendingPathComponent(".build/debug/mamtelemetryctl")
        p.arguments = args
        var e = ProcessInfo.processInfo.environment
        e.removeValue(forKey: "MAMTELEMETRY_DATA_DIR")
        for (k, v) in env { e[k] = v }
        p.environment = e
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let r = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: r, as: UTF8.self))
    }

    static func send(_ d: DaemonProcess, _ method: HTTPMethod, _ path: String, body: [UInt8] = [], authorization: String?) async throws
        -> Int
    {
        try await exchange(
            d, method, path, body: body, headers: authorization.map { [("Authorization", $0)] } ?? [], anonymous: authorization == nil
        ).0
    }

    /// One request with exactly the given credentials: unlike `DaemonProcess.post`, adds
    /// the admin token only when `headers` is empty and `anonymous` is false.
    static func exchange(
        _ d: DaemonProcess, _ method: HTTPMethod, _ path: String, body: [UInt8] = [], headers: [(String, String)] = [],
        anonymous: Bool = false
    ) async throws -> (Int, [UInt8]) {
        var r = HTTPClientRequest(url: d.baseURL + path)
        r.method = method
        for (k, v) in headers { r.headers.add(name: k, value: v) }
        if headers.isEmpty, !anonymous, let t = d.adminToken { r.headers.add(name: "Authorization", value: "Bearer \(t)") }
        if !body.isEmpty { r.body = .bytes(ByteBuffer(bytes: body)) }
        let resp = try await HTTPClient.shared.execute(r, timeout: .seconds(30))
        let bytes = try await resp.body.collect(upTo: 64 << 20)
        return (Int(resp.status.code), [UInt8](buffer: bytes))
    }
}
