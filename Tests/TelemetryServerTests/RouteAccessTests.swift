import ControlState
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TelemetryStore
import TestSupport
import Testing

@testable import TelemetryServer

/// The access a route needs is declared where it is registered and enforced on exactly the
/// route the router matched. These tests attack that the way the audit did — a `read` token
/// creating an `admin` token with `POST /v1//tokens`, editing the app registry through
/// `//v1/apps/{id}`, ingesting through `/v1/telemetry/` — and with every other spelling,
/// method and credential, checking the router's own route table rather than a copy of it.
@Suite(.serialized) struct RouteAccessTests {
    /// Statuses a request may end with when no access check let it through (400: the
    /// middleware refused the caller's query parameters, `CallerQuery`).
    static let refusals: Set<Int> = [400, 401, 403, 404]

    /// The property every request must satisfy: a handler runs only after the access check
    /// of the route it belongs to passed, and only for a caller the declaration allows.
    static func check(_ o: AccessTestDaemon.Outcome) {
        #expect(o.granted.count <= 1, "\(o)")
        if let route = o.granted.first {
            #expect(
                AccessTestDaemon.allows(o.credential, route.access),
                "a handler ran for a caller its declaration refuses: \(o) needs \(route.access)")
        } else {
            #expect(Self.refusals.contains(o.status), "answered without passing an access check: \(o)")
        }
    }

    /// What each route must declare, written out here on purpose: a new route fails this test
    /// until someone decides, in review, who may call it.
    static let expectedAccess: [String: String] = [
        "GET /healthz": "open", "GET /readyz": "open", "GET /openapi.yaml": "open",
        "GET /metrics": "read (unless opened by configuration)",
        "POST /v1/telemetry": "ingest", "POST /v1/logs": "ingest", "POST /v1/diagnostics": "ingest",
        "GET /v1/events": "read", "GET /v1/logs": "read", "GET /v1/incidents/{id}": "read",
        "GET /v1/stats/enrollment": "read", "GET /v1/stats/launches": "read", "GET /v1/stats/actions": "read",
        "GET /v1/stats/drops": "read", "POST /v1/stats/rollups/rebuild": "admin",
        "GET /v1/bundles": "bundle", "GET /v1/incidents/{id}/bundle": "bundle",
        "GET /v1/apps": "admin", "PUT /v1/apps/{appId}": "admin", "DELETE /v1/apps/{appId}": "admin",
        "GET /v1/tokens": "admin", "POST /v1/tokens": "admin", "DELETE /v1/tokens/{id}": "admin",
        "GET /v1/whoami": "read", "GET /v1/status-codes": "read", "GET /v1/devices": "read", "GET /v1/incidents": "read",
        "GET /v1/stats/apps": "read",
        "GET /v1/pseudonyms": "pii",
        "GET /console": "open",
        "GET /console/{asset}": "open",
    ]

    @Test func everyRouteInTheRoutersTableDeclaredItsAccess() async throws {
        try await AccessTestDaemon.run { daemon, _ in
            let routed = Set(daemon.routed)
            let declared = daemon.table.all.map { "\($0.method) \($0.path)" }
            #expect(Set(declared).count == declared.count, "a route was declared twice: \(declared.sorted())")
            #expect(routed == Set(declared), "routes without a declared access: \(routed.subtracting(declared).sorted())")
            #expect(routed.count >= 22, "the router lists only \(routed.sorted())")
            for entry in daemon.table.all {
                let key = "\(entry.method) \(entry.path)"
                #expect(Self.expectedAccess[key] == entry.access.description, "\(key) declares \(entry.access)")
            }
            #expect(Set(Self.expectedAccess.keys) == routed, "expected-access table and router differ")
        }
    }

    /// What each route shows of apps, also written out here: an app-bound token is held to
    /// its apps by the declaration, so a new read route must say how (`AppRule`).
    static let expectedApps: [String: String] = [
        "GET /healthz": "none", "GET /readyz": "none", "GET /openapi.yaml": "none", "GET /metrics": "every app",
        "POST /v1/telemetry": "per record", "POST /v1/logs": "per record", "POST /v1/diagnostics": "per record",
        "GET /v1/events": "per app", "GET /v1/logs": "per app", "GET /v1/incidents/{id}": "per app",
        "GET /v1/stats/enrollment": "per app", "GET /v1/stats/launches": "per app", "GET /v1/stats/actions": "per app",
        "GET /v1/stats/drops": "per app", "POST /v1/stats/rollups/rebuild": "none",
        "GET /v1/stats/apps": "per app", "GET /v1/incidents": "per app", "GET /v1/devices": "per app",
        "GET /v1/status-codes": "none",
        "GET /v1/bundles": "per app", "GET /v1/incidents/{id}/bundle": "per app",
        "GET /v1/apps": "none", "PUT /v1/apps/{appId}": "none", "DELETE /v1/apps/{appId}": "none",
        "GET /v1/tokens": "none", "POST /v1/tokens": "none", "DELETE /v1/tokens/{id}": "none",
        "GET /v1/whoami": "none", "GET /v1/pseudonyms": "none", "GET /console": "none", "GET /console/{asset}": "none",
    ]

    @Test func everyRouteDeclaredWhatItShowsOfApps() async throws {
        try await AccessTestDaemon.run { daemon, _ in
            for entry in daemon.table.all {
                let key = "\(entry.method) \(entry.path)"
                #expect(Self.expectedApps[key] == entry.apps.description, "\(key) declares apps: \(entry.apps)")
                // A route that reads records is per app; only admin, open and token-only routes
                // are not, and the SDK's status-code list, which holds no app's data.
                if case .scope(let scope) = entry.access, [.read, .bundle].contains(scope),
                    !["/v1/whoami", "/v1/status-codes"].contains(entry.path)
                {
                    #expect(entry.apps.description == "per app", "\(key)")
                }
            }
            #expect(Set(Self.expectedApps.keys) == Set(daemon.routed), "expected-apps table and router differ")
        }
    }

    @Test func everyRouteTimesEveryCredentialTimesEverySpelling() async throws {
        try await AccessTestDaemon.run { daemon, client in
            var sent = 0
            for route in daemon.table.all {
                let path = AccessTestDaemon.concrete(route.path)
                for credential in daemon.credentials {
                    // The canonical spelling reaches the route's check, and its declaration decides.
                    let canonical = try await daemon.send(client, route.method, path, as: credential)
                    Self.check(canonical)
                    #expect(canonical.status < 500, "\(canonical)")
                    if AccessTestDaemon.allows(credential, route.access) {
                        #expect(canonical.granted.map(\.path) == [route.path], "\(canonical)")
                    } else {
                        #expect(canonical.granted.isEmpty && [401, 403].contains(canonical.status), "\(canonical)")
                    }
                    for spelling in PathSpellings.of(path) {
                        Self.check(try await daemon.send(client, route.method, spelling, as: credential))
                        sent += 1
                    }
                }
            }
            #expect(sent > 3000)
        }
    }

    /// The spellings the audit used (a doubled, leading or trailing slash) do reach the route
    /// for a caller it allows, so the refusals above are the access check's and not a 404.
    @Test func slashSpellingsReachTheRouteForTheAdmin() async throws {
        try await AccessTestDaemon.run { daemon, client in
            let admin = try #require(daemon.credentials.first { $0.label == "admin" })
            for route in daemon.table.all {
                let path = AccessTestDaemon.concrete(route.path)
                for spelling in ["/" + path, path + "/", path.replacingOccurrences(of: "/", with: "//")] {
                    let o = try await daemon.send(client, route.method, spelling, as: admin)
                    #expect(o.granted.map(\.path) == [route.path] && o.status < 500, "\(o)")
                }
            }
        }
    }

    /// `X-APIKey` (what 1DS collectors send) is a credential on ingest routes only: elsewhere
    /// it counts as no token at all, whatever the token may do, and an unknown key is 401.
    @Test func anAPIKeyHeaderIsACredentialOnIngestRoutesOnly() async throws {
        try await AccessTestDaemon.run { daemon, client in
            var reachedIngest = 0
            for route in daemon.table.all {
                let path = AccessTestDaemon.concrete(route.path)
                for credential in daemon.credentials where credential.secret != nil {
                    let o = try await daemon.send(client, route.method, path, as: credential, presented: .apiKey)
                    Self.check(o)
                    let anonymous = AccessTestDaemon.Credential(label: "none")
                    switch route.access.requiredScope {
                    case .some(.ingest):
                        let allowed = AccessTestDaemon.allows(credential, route.access)
                        #expect(o.granted.isEmpty == !allowed, "\(o)")
                        if !allowed { #expect(o.status == (credential.token == nil ? 401 : 403), "\(o)") }
                        if allowed { reachedIngest += 1 }
                    case .some:
                        #expect(o.granted.isEmpty && o.status == 401, "X-APIKey is not a credential here: \(o)")
                    case .none:
                        #expect(AccessTestDaemon.allows(anonymous, route.access) && o.granted.map(\.path) == [route.path], "\(o)")
                    }
                }
            }
            #expect(reachedIngest >= 3 * 2, "the ingest routes were never reached with X-APIKey")
        }
    }

    /// A revoked token is refused at once and after a restart (revocation is persisted); the
    /// token listing never shows a secret, and `control.sqlite` holds none in plain text.
    @Test func revokedTokensStayRefusedAndSecretsAreNotStoredInPlainText() async throws {
        try await AccessTestDaemon.run { daemon, client in
            let admin: HTTPFields = [.authorization: "Bearer \(daemon.secret("admin"))", .contentType: "application/json"]
            let (status, created) = try await client.execute(
                uri: "/v1/tokens", method: .post, headers: admin, body: ByteBuffer(string: #"{"name":"temp","scopes":["read"]}"#)
            ) { (Int($0.status.code), try JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as? [String: Any] ?? [:]) }
            #expect(status == 201)
            let secret = try #require(created["token"] as? String)
            let id = try #require((created["info"] as? [String: Any])?["id"] as? String)
            let secretPart = try #require(secret.split(separator: "_").last.map(String.init))
            func events(_ bearer: String) async throws -> Int {
                try await client.execute(uri: "/v1/events", method: .get, headers: [.authorization: "Bearer \(bearer)"]) {
                    Int($0.status.code)
                }
            }
            #expect(try await events(secret) == 200)
            let listing = try await client.execute(uri: "/v1/tokens", method: .get, headers: admin) { String(buffer: $0.body) }
            #expect(listing.contains(id) && !listing.contains(secretPart), "\(listing)")
            #expect(try await client.execute(uri: "/v1/tokens/\(id)", method: .delete, headers: admin) { $0.status } == .noContent)
            #expect(try await events(secret) == 401)
            // What a restart reads: a fresh token store on the same control database.
            let restarted = try TokenStore(control: try ControlDatabase.open(directory: daemon.directory))
            #expect(restarted.token(id: id)?.revoked == true)
            #expect(restarted.authenticate(secret) == nil)
            var searched = 0
            for name in try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path) where name.hasPrefix("control.sqlite") {
                let bytes = try Data(contentsOf: daemon.directory.appendingPathComponent(name))
                searched += 1
                #expect(bytes.range(of: Data(secretPart.utf8)) == nil, "\(name) holds the token secret in plain text")
            }
            #expect(searched >= 1, "control.sqlite was not found in the data directory")
        }
    }

    @Test func theAuditsEscalationsAreRefused() async throws {
        try await AccessTestDaemon.run { daemon, client in
            let read = try #require(daemon.credentials.first { $0.label == "read" })
            for (method, uri) in [
                (HTTPRequest.Method.post, "/v1//tokens"), (.put, "//v1/apps/com.contoso.a"), (.delete, "//v1/apps/com.contoso.a"),
                (.post, "/v1/telemetry/"), (.post, "/v1/tokens/"), (.get, "/v1//tokens"),
            ] {
                let o = try await daemon.send(client, method, uri, as: read)
                #expect(o.granted.isEmpty && [403, 404].contains(o.status), "\(o)")
            }
            // Nothing the attempts asked for happened.
            #expect(!daemon.components.tokens.list().contains { $0.name == "escalated" })
            #expect(daemon.components.registry.flags(for: "com.contoso.a") == nil)
        }
    }

    @Test func anUnknownPathIs404WhateverTheCaller() async throws {
        try await AccessTestDaemon.run { daemon, client in
            for path in ["/", "/v1", "/v1/", "/v1/nope", "/v2/tokens", "/v1/tokens/x/y", "/admin", "/v1/events/1", "/.env", "/v1/stats"] {
                for credential in daemon.credentials {
                    for method in [HTTPRequest.Method.get, .post, .put, .delete] {
                        let o = try await daemon.send(client, method, path, as: credential)
                        #expect(o.status == 404 && o.granted.isEmpty, "\(o)")
                    }
                }
            }
        }
    }

    /// Random method × path spelling (mutations composed) × credential, seeded so a failure
    /// replays: never does a handler run for a caller its route's declaration refuses.
    @Test func randomRequestsNeverReachAHandlerTheirTokenMayNotUse() async throws {
        try await AccessTestDaemon.run { daemon, client in
            var rng = SeededRandom(seed: 0x6D61_6D74)
            let methods: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .head, .options]
            let routes =
                daemon.table.all.map { (method: $0.method, path: AccessTestDaemon.concrete($0.path)) }
                + [(.get, "/v1/x"), (.get, "/metrics/x"), (.post, "/healthz/../v1/tokens")]
            var granted = 0
            for _ in 0..<2500 {
                let route = routes[Int(rng.next() % UInt64(routes.count))]
                var path = route.path
                for _ in 0..<(rng.next() % 3) {
                    let spellings = PathSpellings.of(path)
                    path = spellings[Int(rng.next() % UInt64(spellings.count))]
                }
                // Half the time the route's own method, so many requests do reach a check.
                let method = rng.next() % 2 == 0 ? route.method : methods[Int(rng.next() % UInt64(methods.count))]
                let credential = daemon.credentials[Int(rng.next() % UInt64(daemon.credentials.count))]
                let o = try await daemon.send(client, method, path, as: credential)
                Self.check(o)
                if !o.granted.isEmpty { granted += 1 }
            }
            // Guards against a generator that never reaches a handler, which would prove nothing.
            #expect(granted > 100)
        }
    }
}
