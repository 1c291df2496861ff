import Compression
import ControlState
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TelemetryStore
import Testing

@testable import TelemetryServer

/// A token bound to apps reads only those apps, on every read route of the router's own
/// table: the audit's `read` token created with `apps` read every app while `whoami`
/// reported the list. Two apps are seeded; every record, incident and stats key of the other
/// app carries a marker. Every GET route the token may call is asked with the other app named
/// every way a request can name it (`app=`, its incident in the path and in `incident=`, its
/// device, its user's pseudonym, nothing at all), and no 2xx answer may hold the marker
/// (bundles are unpacked first). The token holds `pii`, so nothing is hidden by redaction.
@Suite(.serialized) struct ReadAppBindingTests {
    static let mine = "com.contoso.mine"
    static let other = "com.contoso.other"
    static let third = "com.contoso.third"
    /// In every record, incident description and stats key of `other`.
    static let marker = "secret-of-other"
    static let visible = "visible-mine"

    struct Seeded {
        var mineIncident: (id: String, guid: String)
        var otherIncident: (id: String, guid: String)
    }

    /// Device ids that do not contain the app's id (a bundle's manifest echoes the request).
    static func device(_ app: String) -> String { app == other ? "device-2" : "device-1" }

    static func post(_ client: some TestClientProtocol, _ uri: String, _ body: String, token: String) async throws -> [String: Any] {
        try await client.execute(
            uri: uri, method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "application/x-ndjson"],
            body: ByteBuffer(string: body)
        ) { r in
            #expect(r.status.code < 300, "\(uri): \(String(buffer: r.body))")
            return (try? JSONSerialization.jsonObject(with: Data(buffer: r.body)) as? [String: Any]) ?? [:]
        }
    }

    static func seed(_ daemon: AccessTestDaemon, _ client: some TestClientProtocol) async throws -> Seeded {
        let admin = daemon.secret("admin")
        var incidents: [String: (String, String)] = [:]
        for app in [mine, other] {
            let tag = app == other ? marker : visible
            let device = device(app)
            let user = app == other ? "bob@contoso.com" : "alice@contoso.com"
            let events = [
                #"{"name":"AppLaunch","eventId":"l-\#(app)","appId":"\#(app)","deviceId":"\#(device)","identity":"\#(user)","data":{"managementType":"\#(tag)","note":"\#(tag)"}}"#,
                #"{"name":"EnrollmentCall","eventId":"e-\#(app)","appId":"\#(app)","deviceId":"\#(device)","identity":"\#(user)","data":{"operation":"\#(tag)","statusCode":200,"didSucceed":false,"durationMs":12}}"#,
                #"{"name":"IntuneAction","eventId":"a-\#(app)","appId":"\#(app)","deviceId":"\#(device)","identity":"\#(user)","data":{"action":"\#(tag)"}}"#,
            ]
            _ = try await post(client, "/v1/telemetry", events.joined(separator: "\n"), token: admin)
            // Sent again: a duplicate drop counted under the app.
            _ = try await post(client, "/v1/telemetry", events[0], token: admin)
            let log = #"{"level":"info","message":"log \#(tag)","deviceId":"\#(device)","identity":"\#(user)"}"#
            _ = try await post(client, "/v1/logs?app=\(app)", log, token: admin)
            let upload =
                #"{"appId":"\#(app)","deviceId":"\#(device)","identity":"\#(user)","description":"incident \#(tag)","logs":[{"level":"error","message":"upload \#(tag)"}]}"#
            let answer = try await post(client, "/v1/diagnostics", upload, token: admin)
            let incident = try #require(answer["incident"] as? [String: Any])
            incidents[app] = (incident["id"] as! String, incident["guid"] as! String)
        }
        return Seeded(mineIncident: incidents[mine]!, otherIncident: incidents[other]!)
    }

    /// An answer as the caller gets it: the body, unpacked when it is a tar.gz bundle.
    static func get(_ client: some TestClientProtocol, _ uri: String, token: String) async throws -> (status: Int, text: String) {
        try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"]) { r in
            var bytes = [UInt8](buffer: r.body)
            if r.headers[.contentType] == "application/gzip" { bytes = try Inflate.decompress(bytes, format: .gzip) }
            return (Int(r.status.code), String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Asks every GET route `token` may call, the other app named every way; returns how
    /// many answers were 2xx (so a sweep that reaches nothing fails).
    static func sweep(
        _ daemon: AccessTestDaemon, _ client: some TestClientProtocol, token: Token, secret: String, seeded: Seeded
    ) async throws -> Int {
        let pseudonymOfOther = daemon.components.pseudonymizer.identityPseudonym("bob@contoso.com")
        let other = seeded.otherIncident
        let queries = [
            "", "app=\(Self.other)", "app=\(Self.mine)", "incident=\(other.id)", "incident=\(other.guid)",
            "incident=\(seeded.mineIncident.id)", "device=\(Self.device(Self.other))", "identity=\(pseudonymOfOther)",
            "since=-7d&limit=1000", "app=\(Self.other)&device=\(Self.device(Self.other))", "name=AppLaunch",
            // Device lookups: a prefix both apps' devices share, the other's id, a near miss.
            "match=device", "match=\(Self.device(Self.other))", "match=DEVICE-2", "match=device-9",
        ]
        var answered = 0
        for route in daemon.table.all where route.method == .get {
            guard AccessTestDaemon.allows(.init(label: "bound", token: token), route.access) else { continue }
            let paths =
                route.path.contains("{id}")
                ? [other.id, other.guid, seeded.mineIncident.id].map { route.path.replacingOccurrences(of: "{id}", with: $0) }
                : [route.path]
            for path in paths {
                for query in queries {
                    let bundle = path.contains("bundle")
                    let full = query + (bundle ? (query.isEmpty ? "" : "&") + "format=tar.gz" : "")
                    let uri = full.isEmpty ? path : "\(path)?\(full)"
                    let (status, text) = try await get(client, uri, token: secret)
                    let namesOther =
                        path.contains(other.id) || path.contains(other.guid) || query.contains("app=\(Self.other)")
                        || query.contains("incident=\(other.id)") || query.contains("incident=\(other.guid)")
                    if namesOther, case .perApp = route.apps {
                        #expect([403, 404].contains(status), "\(uri) named the other app and answered \(status): \(text.prefix(300))")
                    }
                    guard (200..<300).contains(status) else { continue }
                    answered += 1
                    #expect(!text.contains(Self.marker) && !text.contains(Self.other), "\(uri) shows the other app: \(text.prefix(2000))")
                }
            }
        }
        return answered
    }

    @Test func aBoundReadTokenSeesOnlyItsAppsOnEveryReadRoute() async throws {
        let configure: (inout ServerConfiguration) -> Void = { $0.auth.metricsRequireToken = true }
        try await AccessTestDaemon.run(configure: configure) { daemon, client in
            let seeded = try await Self.seed(daemon, client)
            for apps in [[Self.mine], [Self.mine, Self.third]] {
                let (token, secret) = try await daemon.components.tokens.create(
                    name: "support for \(apps.joined(separator: "+"))", scopes: [.read, .bundle, .pii], apps: apps, now: 0)
                let answered = try await Self.sweep(daemon, client, token: token, secret: secret, seeded: seeded)
                #expect(answered > 40, "only \(answered) answers were 2xx")

                // What the token may see, it does see: the sweep is not passing on empty answers.
                for uri in [
                    "/v1/events?limit=1000", "/v1/logs", "/v1/stats/launches", "/v1/stats/enrollment", "/v1/stats/actions",
                    "/v1/incidents/\(seeded.mineIncident.id)", "/v1/bundles?device=\(Self.device(Self.mine))&format=tar.gz",
                    "/v1/incidents",
                ] {
                    let (status, text) = try await Self.get(client, uri, token: secret)
                    #expect(status == 200 && text.contains(Self.visible), "\(uri): \(status) \(text.prefix(500))")
                }
                for uri in ["/v1/stats/apps", "/v1/devices?match=device"] {
                    let (status, text) = try await Self.get(client, uri, token: secret)
                    #expect(status == 200 && text.contains(Self.mine), "\(uri): \(status) \(text.prefix(500))")
                }
                let drops = try await Self.get(client, "/v1/stats/drops", token: secret)
                #expect(drops.text.contains(Self.mine) && !drops.text.contains(Self.other), "\(drops.text)")
                let who = try await Self.get(client, "/v1/whoami", token: secret)
                let whoJSON = try JSONSerialization.jsonObject(with: Data(who.text.utf8)) as? [String: Any]
                #expect(whoJSON?["apps"] as? [String] == apps)
                // `/metrics` shows every app at once: refused to a bound token, not filtered.
                let metrics = try await Self.get(client, "/metrics", token: secret)
                #expect(metrics.status == 403 && metrics.text.contains("app_not_allowed"), "\(metrics.text.prefix(300))")
            }
            // An unbound token reads both apps (the marker is reachable at all).
            let (_, all) = try await daemon.components.tokens.create(name: "all apps", scopes: [.read, .pii], apps: [], now: 0)
            #expect(try await Self.get(client, "/v1/events?limit=1000", token: all).text.contains(Self.marker))
        }
    }
}

/// `POST /v1/tokens` refuses an app list it could not enforce exactly, naming the element.
@Suite struct TokenAppsRouteTests {
    @Test func emptyAndCommaBearingAppIdsAreRefusedAtCreation() async throws {
        try await AccessTestDaemon.run { daemon, client in
            for (apps, expected) in [
                (#"[""]"#, "apps[0] is empty"), (#"["com.a","com.b,com.c"]"#, "apps[1] 'com.b,com.c' holds a comma"),
                (#"[" "]"#, "apps[0] is empty"),
            ] {
                let body = #"{"name":"relay","scopes":["read"],"apps":\#(apps)}"#
                try await client.execute(
                    uri: "/v1/tokens", method: .post, headers: [.authorization: "Bearer \(daemon.secret("admin"))"],
                    body: ByteBuffer(string: body)
                ) { r in
                    let text = String(buffer: r.body)
                    #expect(r.status == .badRequest && text.contains("invalid_apps") && text.contains(expected), "\(apps): \(text)")
                }
            }
            #expect(!daemon.components.tokens.list().contains { $0.name == "relay" })
        }
    }
}
