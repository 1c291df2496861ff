import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import StoreCore
import TelemetryModel
import TelemetryStore
import Testing

@testable import TelemetryServer

/// The browser console is served by the daemon itself, from assets embedded at build time,
/// without a token (the files hold no data), and `GET /v1/whoami` tells a token its own
/// scopes without ever echoing its secret. The console's behaviour in a browser is
/// `Tests/BrowserTests` (run by `scripts/browser-test.sh`).
@Suite(.serialized) struct ConsoleRoutesTests {
    static let assetsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/SupportConsole/Assets")

    static func assetNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: assetsDirectory.path).filter { !$0.hasPrefix(".") }.sorted()
    }

    static func withApp(_ test: @escaping @Sendable (any TestClientProtocol, DaemonComponents) async throws -> Void) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = ServerConfiguration()
        configuration.dataDirectory = dir
        configuration.journalMirror = false
        let logger = Logger(label: "console-tests")
        let components = try DaemonComponents(
            configuration: configuration, clock: SystemWallClock(), metrics: PrometheusMetrics(), space: StatvfsFilesystemSpace(),
            logger: logger)
        let app = buildApplication(components: components, logger: logger)
        try await app.test(.router) { client in try await test(client, components) }
    }

    @Test func everyAssetIsServedWithoutATokenByteForByte() async throws {
        let names = try Self.assetNames()
        #expect(names.contains("index.html") && names.contains("app.js"), "found \(names)")
        try await Self.withApp { client, _ in
            for name in names {
                let onDisk = try [UInt8](Data(contentsOf: Self.assetsDirectory.appendingPathComponent(name)))
                try await client.execute(uri: "/console/\(name)", method: .get) { r in
                    #expect(r.status == .ok, "\(name): HTTP \(r.status)")
                    #expect([UInt8](buffer: r.body) == onDisk, "\(name) is not served as it is in the repository")
                    let type = r.headers[.contentType] ?? ""
                    switch name.split(separator: ".").last {
                    case "js": #expect(type == "text/javascript; charset=utf-8", "\(name): \(type)")
                    case "css": #expect(type == "text/css; charset=utf-8", "\(name): \(type)")
                    case "html": #expect(type == "text/html; charset=utf-8", "\(name): \(type)")
                    case "svg": #expect(type == "image/svg+xml", "\(name): \(type)")
                    default: break
                    }
                    #expect(r.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("script-src 'self'") == true)
                    #expect(r.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                }
            }
        }
    }

    @Test func consoleRootRedirectsToTheDirectoryAndServesTheIndex() async throws {
        let index = try [UInt8](Data(contentsOf: Self.assetsDirectory.appendingPathComponent("index.html")))
        try await Self.withApp { client, _ in
            try await client.execute(uri: "/console", method: .get) { r in
                #expect(r.status == .permanentRedirect)
                #expect(r.headers[.location] == "console/")
            }
            let etag = try await client.execute(uri: "/console/", method: .get) { r in
                #expect(r.status == .ok)
                #expect([UInt8](buffer: r.body) == index)
                return r.headers[.eTag]
            }
            #expect(etag?.hasPrefix("\"") == true)
            try await client.execute(uri: "/console/", method: .get, headers: [.ifNoneMatch: etag ?? ""]) { r in
                #expect(r.status == .notModified)
                #expect(r.body.readableBytes == 0)
            }
            try await client.execute(uri: "/console/no-such-file.js", method: .get) { r in
                #expect(r.status == .notFound)
                #expect(String(buffer: r.body).contains("no file 'no-such-file.js'"))
            }
            // The open prefix reaches console files only, never the API behind it.
            try await client.execute(uri: "/console/../v1/events", method: .get) { r in
                #expect(r.status != .ok, "\(String(buffer: r.body))")
                #expect(!String(buffer: r.body).contains("\"events\""))
            }
        }
    }

    /// No CDN, no external fonts: every URL in the console points back at this daemon.
    @Test func assetsReferenceNothingOutsideTheDaemon() throws {
        let allowed = ["http://www.w3.org/2000/svg"]
        for name in try Self.assetNames() {
            var text = try String(contentsOf: Self.assetsDirectory.appendingPathComponent(name), encoding: .utf8)
            for a in allowed { text = text.replacingOccurrences(of: a, with: "") }
            #expect(!text.contains("http://") && !text.contains("https://"), "\(name) refers to another host")
            #expect(!text.contains("localStorage.setItem"), "\(name) must keep the token out of localStorage")
        }
    }

    @Test func whoamiNamesTheTokenAndItsScopesButNotItsSecret() async throws {
        try await Self.withApp { client, components in
            let (_, support) = try await components.tokens.create(name: "support-desk", scopes: [.read, .bundle], apps: [], now: 0)
            let (_, admin) = try await components.tokens.create(name: "root", scopes: [.admin], apps: [], now: 0)
            let (_, ingest) = try await components.tokens.create(name: "relay", scopes: [.ingest], apps: ["com.contoso.a"], now: 0)
            try await client.execute(uri: "/v1/whoami", method: .get, headers: [.authorization: "Bearer \(support)"]) { r in
                #expect(r.status == .ok)
                let body = String(buffer: r.body)
                let json = try JSONSerialization.jsonObject(with: Data(buffer: r.body)) as? [String: Any] ?? [:]
                #expect(json["name"] as? String == "support-desk")
                #expect(json["scopes"] as? [String] == ["bundle", "read"])
                #expect(json["effectiveScopes"] as? [String] == ["read", "bundle"])
                #expect(!body.contains(String(support.split(separator: "_").last!)), "whoami echoed the secret")
            }
            try await client.execute(uri: "/v1/whoami", method: .get, headers: [.authorization: "Bearer \(admin)"]) { r in
                let json = try JSONSerialization.jsonObject(with: Data(buffer: r.body)) as? [String: Any] ?? [:]
                #expect(json["scopes"] as? [String] == ["admin"])
                #expect(json["effectiveScopes"] as? [String] == ["ingest", "read", "bundle", "pii", "admin"])
            }
            try await client.execute(uri: "/v1/whoami", method: .get) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/v1/whoami", method: .get, headers: [.authorization: "Bearer \(ingest)"]) { r in
                #expect(r.status == .forbidden)
                #expect(String(buffer: r.body).contains("'read' scope"))
            }
        }
    }
}
