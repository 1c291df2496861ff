import Foundation
import TestSupport
import Testing

/// The built daemon and its `pseudonym.key` (issue 11, item 6): a damaged or unreadable key
/// stops it with exit status 65 and a message saying what to do, and is left as it was —
/// never silently replaced, which would change every pseudonym and journal identity hash. A
/// new key is private and stays the same across restarts.
@Suite(.serialized) struct PseudonymKeyTests {
    /// The pseudonym a read token is shown for one identity (stored once per daemon start).
    static func pseudonym(_ d: DaemonProcess) async throws -> String {
        let record =
            #"{"level":"info","message":"key check","appId":"com.contoso.mail","deviceId":"key-check","identity":"Jane@Contoso.com"}"#
        #expect(try await d.ingestLogs(record).0 == 200)
        let read = try await d.createToken(name: "reader-\(UUID().uuidString.prefix(6))", scopes: ["read"])
        let (status, body) = try await d.get("/v1/logs?device=key-check&limit=1", headers: [("Authorization", "Bearer \(read)")])
        #expect(status == 200)
        let shown = try #require((parseJSON(body)["logs"] as? [[String: Any]])?.first?["identity"] as? String)
        #expect(shown.hasPrefix("user-"))
        return shown
    }

    @Test func aNewKeyIsPrivateAndKeepsPseudonymsAcrossRestarts() async throws {
        let d = try DaemonProcess()
        defer { d.cleanUp() }
        try await d.start()
        let before = try await Self.pseudonym(d)
        let key = d.dataDirectory.appendingPathComponent("pseudonym.key")
        let attributes = try FileManager.default.attributesOfItem(atPath: key.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.size] as? NSNumber)?.intValue == 32)
        d.stop()
        try await d.start()
        #expect(try await Self.pseudonym(d) == before)
    }

    @Test(arguments: ["short", "directory"])
    func aDamagedKeyStopsTheDaemonAndIsLeftAlone(damage: String) async throws {
        let d = try DaemonProcess()
        defer { d.cleanUp() }
        try await d.start()
        let original = try await Self.pseudonym(d)
        d.stop()
        let key = d.dataDirectory.appendingPathComponent("pseudonym.key")
        let saved = try Data(contentsOf: key)
        try FileManager.default.removeItem(at: key)
        if damage == "short" {
            try Data(saved.prefix(5)).write(to: key)
        } else {
            try FileManager.default.createDirectory(at: key, withIntermediateDirectories: false)
        }

        await #expect(throws: DaemonProcess.DaemonError.self) { try await d.start() }
        let deadline = Date().addingTimeInterval(10)
        while d.exitStatus == nil && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(d.exitStatus == 65)
        let log = (try? String(contentsOf: d.logFile, encoding: .utf8)) ?? ""
        #expect(log.contains("pseudonym key \(key.path)") && log.contains("refusing to start"), "\(log)")
        if damage == "short" {
            #expect(try Data(contentsOf: key) == saved.prefix(5), "the damaged key was replaced")
        } else {
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: key.path, isDirectory: &isDirectory) && isDirectory.boolValue)
            try FileManager.default.removeItem(at: key)
        }

        // Restoring the key brings the same pseudonyms back.
        try saved.write(to: key)
        try await d.start()
        #expect(try await Self.pseudonym(d) == original)
    }
}
