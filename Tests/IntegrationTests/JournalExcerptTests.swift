import Foundation
import TestSupport
import Testing

/// A bundle's `journal.txt` against a real journald (issue 11, item 11): the built daemon
/// runs inside the journald harness, reads the journal back with journalctl as it does under
/// the shipped unit, and puts in a bundle only the mirrored lines of what the bundle is for
/// — never another device's, another user's or the other environment's — plus its own
/// operational lines, redacted for a caller without `pii`. The journal's `MAM_IDENTITY_HASH`
/// is the `user-…` pseudonym the query API shows and `/v1/pseudonyms` returns.
@Suite(.serialized, .enabled(if: JournaldHarness.isAvailable, "needs root, unshare and systemd-journald"))
struct JournalExcerptTests {
    static let alice = "Alice.Smith@Contoso.com"
    static let bob = "bob@fabrikam.com"
    static var marker: Regex<Substring> { /\[withheld: [0-9]+ chars, text-[0-9a-f]{24}\]/ }

    /// The daemon under the harness (`JournaldHarness.launchDaemon`); `body` drives it; the
    /// daemon and the harness are stopped after.
    static func withDaemon(
        _ arguments: [String], user: (uid: UInt32, groups: [UInt32])? = nil,
        _ body: (JournaldHarness, DaemonProcess) async throws -> Void
    ) async throws {
        let harness = try JournaldHarness()
        defer { harness.remove() }
        let (d, daemon) = try await harness.launchDaemon(arguments, user: user)
        defer { try? FileManager.default.removeItem(at: d.dataDirectory) }
        defer { harness.stop(daemon) }
        try await body(harness, d)
    }

    static func line(_ level: String, _ message: String, device: String, identity: String, ppe: Bool = false) -> String {
        var object: [String: Any] = [
            "level": level, "message": message, "appId": "com.contoso.mail", "deviceId": device, "sessionId": "s-\(device)",
            "identity": identity,
        ]
        if ppe { object["settings"] = ["MAMTelemetryUsePPE": true] }
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func journalText(_ d: DaemonProcess, _ query: String, token: String) async throws -> (text: String, counts: [String: Int]) {
        let (status, bytes) = try await d.get("/v1/bundles?\(query)&format=tar.gz", headers: [("Authorization", "Bearer \(token)")])
        #expect(status == 200, "\(String(decoding: bytes.prefix(300), as: UTF8.self))")
        let path = d.dataDirectory.appendingPathComponent("bundle-\(UUID().uuidString).tar.gz")
        try Data(bytes).write(to: path)
        let members = try BundleFleet.unpack(path.path)
        let manifest = parseJSON(members["manifest.json"] ?? [])
        let journal = try #require(members["journal.txt"], "no journal.txt: \(manifest["journal"] ?? "")")
        let redaction = manifest["redaction"] as? [String: Any] ?? [:]
        let counts = (redaction["byFile"] as? [String: [String: Int]])?["journal.txt"] ?? [:]
        return (String(decoding: journal, as: UTF8.self), counts)
    }

    @Test func bundleJournalHoldsOnlyItsScopeAndTheDaemonsOwnLines() async throws {
        // The mirror carries personal data as sent here, so the bundle's own redaction is what is tested.
        try await Self.withDaemon(["--journal-personal-data", "include"]) { harness, d in
            let tag = UUID().uuidString.prefix(8).lowercased()
            let a = "jx-a-\(tag)"
            let b = "jx-b-\(tag)"
            let lines = [
                Self.line("warning", "A warning \(tag)", device: a, identity: Self.alice),
                Self.line("verbose", "A verbose Jane Roe \(tag)", device: a, identity: Self.alice.uppercased()),
                Self.line("error", "B error \(tag)", device: b, identity: Self.bob),
                Self.line("info", "B info \(tag)", device: b, identity: Self.bob),
                Self.line("error", "A ppe error \(tag)", device: a, identity: Self.alice, ppe: true),
            ]
            let (status, answer) = try await d.ingestLogs(lines.joined(separator: "\n"))
            #expect(status == 200, "\(answer)")
            _ = try await harness.waitForEntries(["MAM_DEVICE_ID=\(a)"], count: 3)
            _ = try await harness.waitForEntries(["MAM_DEVICE_ID=\(b)"], count: 2)
            let bundle = try await d.createToken(name: "support", scopes: ["bundle"])
            let bundlePII = try await d.createToken(name: "support-pii", scopes: ["bundle", "pii"])

            // Device A, prod: its two lines (verbose withheld), not B's, not PPE, plus the
            // daemon's own "started" line.
            let (deviceA, counts) = try await Self.journalText(d, "device=\(a)", token: bundle)
            #expect(deviceA.contains("A warning \(tag)"), "\(deviceA)")
            #expect(deviceA.contains("mamtelemetryd started"), "the daemon's own lines are kept: \(deviceA)")
            for absent in ["B error", "B info", "A ppe error", "Jane Roe", "A verbose"] {
                #expect(!deviceA.contains(absent), "'\(absent)' in device A's journal.txt:\n\(deviceA)")
            }
            #expect(deviceA.matches(of: Self.marker).count == 1, "\(deviceA)")
            #expect(counts["textWithheld"] == 1)
            #expect(deviceA.split(separator: "\n").allSatisfy { $0.hasPrefix("20") && $0.contains(" mamtelemetryd[") }, "\(deviceA)")

            // With pii the verbose line is as the journal holds it.
            let (raw, rawCounts) = try await Self.journalText(d, "device=\(a)", token: bundlePII)
            #expect(raw.contains("A verbose Jane Roe \(tag)") && !raw.contains("B error"))
            #expect(rawCounts["textWithheld"] == 0)

            // PPE for device A: only the PPE line; prod lines stay out.
            let (ppe, _) = try await Self.journalText(d, "device=\(a)&env=ppe", token: bundle)
            #expect(ppe.contains("A ppe error \(tag)") && !ppe.contains("A warning") && !ppe.contains("B error"), "\(ppe)")

            // By identity (a token without pii names her by pseudonym): Alice's prod lines on
            // A, never Bob's.
            let upn = Self.alice.lowercased().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let alice = try await d.json("/v1/pseudonyms?identity=\(upn)")["pseudonym"] as? String ?? "?"
            let (byUser, _) = try await Self.journalText(d, "identity=\(alice)", token: bundle)
            #expect(byUser.contains("A warning \(tag)") && !byUser.contains("B error") && !byUser.contains("B info"), "\(byUser)")

            // One pseudonym everywhere: the journal's MAM_IDENTITY_HASH for Alice (in both
            // casings she was sent in) is what a read query shows and /v1/pseudonyms returns.
            let hashes = Set(try harness.entries(["MAM_DEVICE_ID=\(a)"]).compactMap { $0["MAM_IDENTITY_HASH"] })
            let shown = try await d.json(
                "/v1/pseudonyms?identity=\(Self.alice.uppercased().addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            #expect(hashes == [shown["pseudonym"] as? String ?? "?"], "\(hashes) vs \(shown)")
            let read = try await d.createToken(name: "reader", scopes: ["read"])
            let (_, page) = try await d.get("/v1/logs?device=\(a)", headers: [("Authorization", "Bearer \(read)")])
            let identities = Set((parseJSON(page)["logs"] as? [[String: Any]] ?? []).compactMap { $0["identity"] as? String })
            #expect(identities == hashes)
        }
    }

    /// By default the mirror withholds verbose text: it never reaches the journal's files.
    @Test func theMirrorWithholdsVerboseTextByDefault() async throws {
        try await Self.withDaemon([]) { harness, d in
            let tag = UUID().uuidString.prefix(8).lowercased()
            let device = "jx-v-\(tag)"
            let lines = [
                Self.line("verbose", "Jane Roe refresh_token=\(tag)", device: device, identity: Self.alice),
                Self.line("info", "info \(tag)", device: device, identity: Self.alice),
            ]
            #expect(try await d.ingestLogs(lines.joined(separator: "\n")).0 == 200)
            let entries = try await harness.waitForEntries(["MAM_DEVICE_ID=\(device)"], count: 2)
            let verbose = try #require(entries.first { $0["MAM_LEVEL"] == "verbose" })
            #expect(verbose["MESSAGE"]?.wholeMatch(of: Self.marker) != nil, "\(verbose)")
            #expect(entries.contains { $0["MESSAGE"] == "info \(tag)" })
            let export = try JournaldHarness.journalctl(["-D", harness.journalDirectory.path, "-o", "export", "--no-pager"])
            #expect(export.standardOutput.contains("info \(tag)"))
            #expect(!export.standardOutput.contains("refresh_token=\(tag)") && !export.standardOutput.contains("Jane Roe"))
        }
    }

    /// How the daemon reads the journal under the shipped unit: as an unprivileged user that
    /// is a member of `systemd-journal` (`SupplementaryGroups=systemd-journal`). The same
    /// user without the group gets no journal lines, and the manifest says why.
    @Test(arguments: [true, false])
    func readingTheJournalNeedsTheSystemdJournalGroup(member: Bool) async throws {
        let journalGroup = try #require(JournaldHarness.gid(of: "systemd-journal"), "no systemd-journal group on this host")
        let nobody: UInt32 = 65534
        try await Self.withDaemon([], user: (nobody, member ? [journalGroup] : [])) { harness, d in
            let device = "jx-g-\(UUID().uuidString.prefix(8))"
            #expect(try await d.ingestLogs(Self.line("error", "group check \(device)", device: device, identity: Self.alice)).0 == 200)
            _ = try await harness.waitForEntries(["MAM_DEVICE_ID=\(device)"])
            let token = try await d.createToken(name: "support", scopes: ["bundle"])
            let (status, bytes) = try await d.get(
                "/v1/bundles?device=\(device)&format=tar.gz", headers: [("Authorization", "Bearer \(token)")])
            #expect(status == 200)
            let path = d.dataDirectory.appendingPathComponent("g.tar.gz")
            try Data(bytes).write(to: path)
            let members = try BundleFleet.unpack(path.path)
            let journal = parseJSON(members["manifest.json"] ?? [])["journal"] as? [String: Any] ?? [:]
            if member {
                #expect(journal["included"] as? Bool == true, "\(journal)")
                #expect(String(decoding: members["journal.txt"] ?? [], as: UTF8.self).contains("group check \(device)"))
            } else {
                #expect(journal["included"] as? Bool == false && members["journal.txt"] == nil, "\(journal)")
                #expect((journal["reason"] as? String)?.contains("journalctl exited") == true, "\(journal)")
            }
        }
    }
}
