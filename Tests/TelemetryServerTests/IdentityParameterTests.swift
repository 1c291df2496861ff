import Compression
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TelemetryStore
import TestSupport
import Testing

@testable import TelemetryServer

/// Without `pii`, `identity=` takes a pseudonym and never a UPN: the audit's
/// `GET /v1/events?identity=JANE@contoso.com` with a `read` token answered the user's records
/// with their pseudonym, a UPN-to-pseudonym oracle reserved to `pii` (`GET /v1/pseudonyms`).
/// Attacked on every GET route of the router's own table with the spellings an attacker
/// would try (case, percent-encoding, padding, the parameter twice or under another name),
/// generated from a seed.
@Suite(.serialized, .timeLimit(.minutes(1))) struct IdentityParameterTests {
    static let upn = "Jane.Doe@Contoso.com"

    static func seed(_ daemon: AccessTestDaemon, _ client: some TestClientProtocol) async throws {
        let admin = daemon.secret("admin")
        var lines: [String] = []
        for (i, user) in [upn, "bob@contoso.com", ""].enumerated() {
            let identity = user.isEmpty ? "" : #","identity":"\#(user)""#
            lines.append(
                #"{"name":"AppLaunch","appId":"com.contoso.a","deviceId":"device-\#(i)"\#(identity),"data":{"managementType":"MDM"}}"#)
        }
        for (uri, body) in [
            ("/v1/telemetry", lines.joined(separator: "\n")),
            ("/v1/logs?app=com.contoso.a", #"{"level":"info","message":"hello","deviceId":"device-0","identity":"\#(upn)"}"#),
        ] {
            let status = try await client.execute(
                uri: uri, method: .post, headers: [.authorization: "Bearer \(admin)", .contentType: "application/x-ndjson"],
                body: ByteBuffer(string: body)
            ) { $0.status }
            #expect(status == .ok)
        }
    }

    static func get(_ client: some TestClientProtocol, _ uri: String, token: String) async throws -> (status: Int, text: String) {
        try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"]) { r in
            var bytes = [UInt8](buffer: r.body)
            if r.headers[.contentType] == "application/gzip" { bytes = try Inflate.decompress(bytes, format: .gzip) }
            return (Int(r.status.code), String(decoding: bytes, as: UTF8.self))
        }
    }

    /// The UPN spelt as an attacker might: each character in random case or percent-encoded,
    /// padded with encoded white space, the parameter's own name varied, given once or twice.
    static func spelling(_ rng: inout SeededRandom, pseudonym: String) -> String {
        var value = ""
        for c in upn {
            let cased = rng.below(2) == 0 ? String(c).uppercased() : String(c).lowercased()
            value += rng.below(4) == 0 ? cased.utf8.map { String(format: "%%%02X", $0) }.joined() : cased
        }
        let padding = ["", "%20", "%09", "%20%20", "%0A"]
        value = rng.pick(padding) + value + rng.pick(padding)
        let name = rng.pick(["identity", "identity", "%69dentity", "identit%79", "%69%64%65%6E%74%69%74%79"])
        switch rng.below(4) {
        case 0: return "\(name)=\(value)&identity=\(pseudonym)"
        case 1: return "identity=\(pseudonym)&\(name)=\(value)"
        default: return "\(name)=\(value)"
        }
    }

    @Test func withoutPIIAUPNIsRefusedOnEveryRouteAndAPseudonymIsTaken() async throws {
        try await AccessTestDaemon.run { daemon, client in
            try await Self.seed(daemon, client)
            let read = daemon.credentials.first { $0.label == "read" }!
            let (_, readBundle) = try await daemon.components.tokens.create(
                name: "read+bundle", scopes: [.read, .bundle], apps: [], now: 0)
            let pseudonym = daemon.components.pseudonymizer.identityPseudonym(Self.upn)
            var rng = SeededRandom(seed: 0x1D3A_7117)
            var refused = 0
            for route in daemon.table.all where route.method == .get {
                guard case .perApp = route.apps else { continue }
                let path = AccessTestDaemon.concrete(route.path)
                let secret = route.access.description == "bundle" ? readBundle : read.secret!
                var spellings = (0..<40).map { _ in Self.spelling(&rng, pseudonym: pseudonym) }
                spellings += [
                    "identity=\(Self.upn)", "identity=bob.smith", "identity=user-\(pseudonym)", "identity=\(pseudonym)x",
                    "identity=\(pseudonym)%40contoso.com", "identity=jane.doe%2540contoso.com", "follow=true&identity=\(Self.upn)",
                ]
                for spelling in spellings {
                    let uri = "\(path)?\(spelling)&since=-1d"
                    let (status, text) = try await Self.get(client, uri, token: secret)
                    #expect((400..<500).contains(status), "\(uri) answered \(status): \(text.prefix(300))")
                    #expect(!text.contains(pseudonym), "\(uri) gave the UPN's pseudonym away: \(text.prefix(300))")
                    if status == 403 {
                        #expect(text.contains("'identity'") && text.contains("/v1/pseudonyms"), "\(text)")
                    }
                    refused += 1
                }
            }
            #expect(refused > 300)

            // The pseudonym (any case, padded) finds exactly the user's records, bundles included.
            for spelling in [pseudonym, pseudonym.uppercased(), "%20\(pseudonym)%20"] {
                let (status, text) = try await Self.get(client, "/v1/events?identity=\(spelling)", token: read.secret!)
                let events =
                    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])["events"]
                    as? [[String: Any]]
                #expect(status == 200 && events?.count == 1 && events?.first?["deviceId"] as? String == "device-0", "\(text)")
            }
            let logs = try await Self.get(client, "/v1/logs?identity=\(pseudonym)", token: read.secret!)
            #expect(logs.status == 200 && logs.text.contains("hello"))
            let bundle = try await Self.get(client, "/v1/bundles?identity=\(pseudonym)&format=tar.gz", token: readBundle)
            #expect(bundle.status == 200 && bundle.text.contains("device-0") && !bundle.text.contains("device-1"))
            #expect(bundle.text.contains("\"identity\" : \"\(pseudonym)\""), "the manifest names the scope")

            // With `pii` a UPN (any case) and a pseudonym both filter.
            let pii = daemon.credentials.first { $0.label == "read+pii" }!.secret!
            for spelling in ["JANE.DOE%40contoso.com", pseudonym] {
                let (status, text) = try await Self.get(client, "/v1/events?identity=\(spelling)", token: pii)
                #expect(status == 200 && text.contains("device-0") && !text.contains("device-1"), "\(text)")
            }
        }
    }

    /// A parameter given twice, or under a spelling of its name the API does not take, is
    /// refused whoever asks: a reader taking the first and another the last must not disagree.
    @Test func repeatedAndMisspeltParametersAreRefused() async throws {
        try await AccessTestDaemon.run { daemon, client in
            let admin = daemon.secret("admin")
            for query in [
                "app=a&app=b", "identity=x&identity=x", "Identity=x", "IDENTITY=x", "%20identity=x", "App=com.a", "limit=1&limit=2",
            ] {
                let (status, text) = try await Self.get(client, "/v1/events?\(query)", token: admin)
                #expect(status == 400 && text.contains("invalid_parameter"), "\(query): \(status) \(text)")
            }
            // Names the API does not take are still ignored (collector clients add their own).
            #expect(try await Self.get(client, "/v1/events?client-id=x&client-id=y&cors=true", token: admin).status == 200)
        }
    }
}
