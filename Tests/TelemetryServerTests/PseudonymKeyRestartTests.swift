import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TelemetryServer

/// The server and its `pseudonym.key` (issue 11, item 6): a new key is private (0600, 32
/// bytes) and the server restarted on the same data directory shows a read caller the same
/// pseudonym for an identity. In process, two runs on one directory; a damaged key stopping
/// the built daemon with exit status 65 is IntegrationTests.PseudonymKeyTests.
@Suite struct PseudonymKeyRestartTests {
    /// The pseudonym a read token is shown for one identity (stored once per run).
    static func pseudonym(_ h: IngestHarness) async throws -> String {
        let record =
            #"{"level":"info","message":"key check","appId":"com.contoso.mail","deviceId":"key-check","identity":"Jane@Contoso.com"}"#
        #expect(try await h.ingestLogs(record).0 == 200)
        let read = try await h.components.tokens.create(
            name: "reader-\(UUID().uuidString.prefix(6))", scopes: [.read], apps: [], now: 0
        ).secret
        let (status, body, _) = try await h.exchange(
            "/v1/logs?device=key-check&limit=1", method: .get, headers: [("Authorization", "Bearer \(read)")])
        #expect(status == 200)
        let shown = try #require((parseJSON(body)["logs"] as? [[String: Any]])?.first?["identity"] as? String)
        #expect(shown.hasPrefix("user-"))
        return shown
    }

    @Test func aNewKeyIsPrivateAndKeepsPseudonymsAcrossRestarts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pseudonym-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let shown = Mutex<[String]>([])
        for _ in 0..<2 {
            try await IngestHarness.run(directory: directory) { h in
                let pseudonym = try await Self.pseudonym(h)
                shown.withLock { $0.append(pseudonym) }
            }
        }
        let key = directory.appendingPathComponent("pseudonym.key")
        let attributes = try FileManager.default.attributesOfItem(atPath: key.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.size] as? NSNumber)?.intValue == 32)
        let pseudonyms = shown.withLock { $0 }
        #expect(pseudonyms.count == 2 && pseudonyms[0] == pseudonyms[1], "\(pseudonyms)")
    }
}
