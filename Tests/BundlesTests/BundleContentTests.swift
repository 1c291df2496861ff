import Archive
import Bundles
import Foundation
import TelemetryModel
import TelemetryStore
import Testing

/// Bundles built from a real SQLite store: the right records, intact checksums, archives
/// the system tools open, redaction, and a readable timeline. Each test has its own store.
struct BundleContentTests {
    let since = BundleFixture.window.0
    let until = BundleFixture.window.1

    /// An incident asked for alone is the device's story: its telemetry and logs from two days
    /// before the upload to an hour after, plus every record of the upload, wherever its time.
    @Test func incidentBundleTellsTheDevicesStoryAroundTheUpload() async throws {
        let f = try BundleFixture()
        try await f.fill()
        let t = BundleFixture.t0
        let h = BundleFixture.hour
        try await f.append(
            "d1-later", [BundleFixture.log(.error, "long after the upload", at: t + 6 * h, device: "D1", identity: "")], kind: .log)
        try await f.append(
            "d1-days-before", [BundleFixture.log(.error, "three days before", at: t - 72 * h, device: "D1", identity: "")], kind: .log)
        try await f.append(
            "shared-old",
            [
                BundleFixture.log(
                    .warning, "an old line the user shared", at: t - 72 * h, device: "D1", identity: "", incident: BundleFixture.incidentID)
            ],
            kind: .log)
        let archive = try await f.bundle(BundleRequest(incident: "mam-7k2q-9xpf"))
        let expected = ["alice-events", "alice-logs", "incident-logs", "shared-old"].reduce(into: Set<String>()) {
            $0.formUnion(f.ids[$1]!)
        }
        #expect(try archive.recordKeys() == expected)
        let incident = try JSONSerialization.jsonObject(with: Data(try archive.member("incident.json").utf8)) as! [String: Any]
        #expect(incident["id"] as? String == BundleFixture.incidentID)
        let manifest = try archive.manifest()
        let request = manifest["request"] as! [String: Any]
        // Default window: two days before the upload (its first shared record) to an hour after.
        #expect(request["since"] as? String == Timestamp.format(milliseconds: t + 3 * h + 30 * BundleFixture.minute - 48 * h))
        #expect(request["until"] as? String == Timestamp.format(milliseconds: t + 5 * h))
        #expect(request["windowDefaulted"] as? Bool == true)
        #expect((manifest["counts"] as! [String: Int]) == ["telemetry": 4, "logs": 5])

        let timeline = try archive.member("timeline.txt")
        if ProcessInfo.processInfo.environment["PRINT_TIMELINE"] != nil { print(timeline) }
        #expect(timeline.contains("incident MAM-7K2Q-9XPF, device D1 from 2 days before the upload to 1 hour after"), "\(timeline)")
        #expect(timeline.contains("Enrollment: 2 calls, 1 succeeded, 1 failed."))
        #expect(
            timeline.contains("AccountNotLicensed (200) x1: The user's tenant uses app protection, but the user has no Intune license."))
        #expect(timeline.contains("-> AccountNotLicensed: The user's tenant uses app protection"))
        #expect(timeline.contains("-> next step: Assign an Intune license to the user"))
        #expect(timeline.contains("UPLOAD          MAM-7K2Q-9XPF: the user shared 2 log records with support"))
        #expect(timeline.contains("-> the user wrote: \"[withheld: "), "the description is withheld without pii: \(timeline)")
        #expect(timeline.contains("\" (withheld: a bundle by a token with the pii scope shows the words)"), "\(timeline)")
        #expect(timeline.contains("enrollment state unknown for user-") && timeline.contains("(shared in MAM-7K2Q-9XPF)"))
        // The upload sits in time order: after the shared error (3 h 40 min), before nothing later.
        let upload = try #require(timeline.range(of: "UPLOAD  "))
        let sharedError = try #require(timeline.range(of: "enrollment state unknown"))
        #expect(sharedError.lowerBound < upload.lowerBound)
        #expect(!timeline.contains(BundleFixture.alice.lowercased()) && !timeline.contains("cannot open mail"))

        // With pii the user's own words are there.
        let pii = try await f.bundle(BundleRequest(incident: BundleFixture.incidentID, piiAllowed: true))
        let piiTimeline = try pii.member("timeline.txt")
        #expect(piiTimeline.contains("-> the user wrote: \"cannot open mail, call \(BundleFixture.alice)\"\n"), "\(piiTimeline)")
        await f.close()
    }

    /// A user's bundle holds the device logs (no identity) of the devices the user used in the
    /// window, never those of another user's device, and says which devices it widened to.
    @Test func identityBundleIncludesTheLogsOfTheUsersDevices() async throws {
        let f = try BundleFixture()
        try await f.fill()
        let t = BundleFixture.t0
        try await f.append(
            "d1-anonymous",
            [BundleFixture.log(.error, "device log without identity", at: t + 2 * BundleFixture.minute, device: "D1", identity: "")],
            kind: .log)
        try await f.append(
            "d2-anonymous", [BundleFixture.log(.error, "bob's device log", at: t + 2 * BundleFixture.minute, device: "D2", identity: "")],
            kind: .log)
        let story = try await f.bundle(BundleRequest(identity: "ALICE.smith@contoso.com", since: since, until: until))
        let expected = ["alice-events", "alice-logs", "incident-logs", "d1-anonymous"].reduce(into: Set<String>()) {
            $0.formUnion(f.ids[$1]!)
        }
        #expect(try story.recordKeys() == expected)
        #expect(try story.member("timeline.txt").contains("with the logs of its devices D1"))
        let own = try await f.bundle(BundleRequest(identity: "alice.smith@contoso.com", since: since, until: until, expandIdentity: false))
        #expect(try own.recordKeys() == expected.subtracting(f.ids["d1-anonymous"]!))
        await f.close()
    }

    /// An incident combined with another scope is narrowed by it, as before: the upload's records.
    @Test func incidentWithADeviceHoldsTheUploadsRecordsOnly() async throws {
        let f = try BundleFixture()
        try await f.fill()
        let archive = try await f.bundle(BundleRequest(incident: BundleFixture.incidentID, device: "D1"))
        #expect(try archive.recordKeys() == f.ids["incident-logs"])
        await f.close()
    }

    @Test func deviceBundleExcludesOtherDevicesAndPPE() async throws {
        let f = try BundleFixture()
        try await f.fill()
        let prod = try await f.bundle(BundleRequest(device: "D1", since: since, until: until))
        let expected = f.ids["alice-events"]!.union(f.ids["alice-logs"]!).union(f.ids["incident-logs"]!)
        #expect(try prod.recordKeys() == expected)
        let ppe = try await f.bundle(BundleRequest(device: "D1", since: since, until: until, env: .ppe))
        #expect(try ppe.recordKeys() == f.ids["ppe-events"])
        let summary = try JSONSerialization.jsonObject(with: Data(try ppe.member("summary.json").utf8)) as! [String: Any]
        #expect((summary["flagsSeen"] as! [String: Any])["usePPE"] as? Bool == true)
        await f.close()
    }

    /// Records are read in pages (reads of the store); where the pages break changes nothing
    /// in any member, redacted or not.
    @Test(arguments: [false, true])
    func pageBoundariesDoNotShowInTheBundle(piiAllowed: Bool) async throws {
        let f = try BundleFixture()
        try await f.fill()
        let request = BundleRequest(device: "D1", since: since, until: until, piiAllowed: piiAllowed)
        let whole = try await f.bundle(request)
        for pageSize in [1, 2, 3] {
            let paged = try await f.bundle(request, pageSize: pageSize)
            for member in ["telemetry.ndjson", "logs.ndjson", "timeline.txt", "summary.json"] {
                #expect(try paged.member(member) == whole.member(member), "\(member) read \(pageSize) at a time")
            }
        }
        #expect(try whole.records("telemetry.ndjson").count == 4)
        await f.close()
    }

    @Test func identityBundleMatchesCaseInsensitively() async throws {
        let f = try BundleFixture()
        try await f.fill()
        let a = try await f.bundle(BundleRequest(identity: "ALICE.smith@contoso.COM", since: since, until: until, format: .tarGz))
        let expected = f.ids["alice-events"]!.union(f.ids["alice-logs"]!).union(f.ids["incident-logs"]!)
        #expect(try a.recordKeys() == expected)
        let b = try await f.bundle(BundleRequest(identity: BundleFixture.bob, since: since, until: until))
        #expect(try b.recordKeys() == f.ids["bob-events"]!.union(f.ids["bob-logs"]!))
        await f.close()
    }

    @Test(arguments: [ArchiveFormat.zip, .tarGz])
    func checksumsVerifyAndSystemToolsOpenTheArchive(format: ArchiveFormat) async throws {
        let f = try BundleFixture()
        try await f.fill()
        let archive = try await f.bundle(BundleRequest(incident: BundleFixture.incidentID, device: "D1", format: format))
        let result = try BundleVerifier.verify(archiveAt: archive.path)
        #expect(result.ok, "\(result.problems)")
        let names = Set(result.verified.map(\.name))
        #expect(names == ["telemetry.ndjson", "logs.ndjson", "timeline.txt", "summary.json", "incident.json"])
        if format == .zip {
            #expect(try run(["/usr/bin/unzip", "-t", archive.path]).status == 0)
        } else {
            let list = try run(["/usr/bin/tar", "tzf", archive.path])
            #expect(list.status == 0)
            #expect(String(decoding: list.stdout, as: UTF8.self).contains("manifest.json"))
        }
        // Tampering is caught.
        var bytes = archive.bytes
        if format == .tarGz {
            let script =
                "mkdir -p \(f.directory.path)/x && cd \(f.directory.path)/x && tar xzf \(archive.path) && echo extra >> timeline.txt && tar czf ../tampered.tar.gz *"
            #expect(try run(["/bin/sh", "-c", script]).status == 0)
            let tampered = try BundleVerifier.verify(archiveAt: f.directory.path + "/tampered.tar.gz")
            #expect(tampered.problems.contains { $0.hasPrefix("timeline.txt") })
        } else {
            // Flip bytes inside the first member's compressed data: CRC or checksum must catch it.
            for offset in [bytes.count / 5, bytes.count / 4] { bytes[offset] ^= 0xFF }
            let damaged = f.directory.path + "/damaged.zip"
            #expect(FileManager.default.createFile(atPath: damaged, contents: bytes))
            #expect((try? BundleVerifier.verify(archiveAt: damaged))?.ok != true)
        }
        await f.close()
    }

    @Test func personalDataIsPseudonymizedStablyUnlessAllowed() async throws {
        let f = try BundleFixture()
        try await f.fill()
        let raw = [BundleFixture.alice.lowercased(), BundleFixture.bob, BundleFixture.aliceOid, "eyJhbGciOiJIUzI1NiJ9"]
        var pseudonymsSeen: [Set<String>] = []
        for format in [ArchiveFormat.zip, .tarGz] {
            let archive = try await f.bundle(BundleRequest(app: "com.contoso.mail", since: since, until: until, format: format))
            var everything = String(decoding: archive.bytes, as: UTF8.self).lowercased()
            let extracted = try run(format == .zip ? ["/usr/bin/unzip", "-p", archive.path] : ["/usr/bin/tar", "-xzOf", archive.path])
            everything += String(decoding: extracted.stdout, as: UTF8.self).lowercased()
            #expect(extracted.stdout.count > 1000)
            for value in raw { #expect(!everything.contains(value.lowercased()), "\(value) leaked in \(format)") }
            let telemetry = try archive.member("telemetry.ndjson") + archive.member("logs.ndjson")
            let users = Set(telemetry.matches(of: /user-[0-9a-f]{24}/).map { String($0.output) })
            pseudonymsSeen.append(users)
            let manifest = try archive.manifest()
            let redaction = manifest["redaction"] as! [String: Any]
            #expect(redaction["enabled"] as? Bool == true)
            let counts = redaction["valuesRedacted"] as! [String: Int]
            #expect(counts["upn"]! >= 10 && counts["objectId"]! >= 6)
            // The JWT was only inside the verbose message, which is withheld whole.
            #expect(counts["token"] == 0)
            #expect(redaction["verboseMessagesScrubbed"] as? Int == 1)
            #expect(!everything.contains("token acquired"), "verbose text leaked in \(format)")
        }
        let alice = f.pseudonymizer.pseudonym(BundleFixture.alice, kind: "user")
        #expect(pseudonymsSeen[0] == pseudonymsSeen[1])
        #expect(pseudonymsSeen[0].contains(alice))
        #expect(pseudonymsSeen[0].count == 2)  // alice and bob, whatever the casing

        let allowed = try await f.bundle(
            BundleRequest(app: "com.contoso.mail", since: since, until: until, caller: "eng@support", piiAllowed: true))
        let text = try allowed.member("telemetry.ndjson") + allowed.member("logs.ndjson")
        // Personal data as stored; the JWT masked even so (credentials are masked for every caller).
        #expect(text.contains(BundleFixture.alice) && text.contains(BundleFixture.bob) && !text.contains(BundleFixture.jwt))
        #expect(text.contains(f.pseudonymizer.pseudonym(BundleFixture.jwt, kind: "token")))
        #expect(text.contains(BundleFixture.aliceOid))
        let manifest = try allowed.manifest()
        #expect((manifest["redaction"] as! [String: Any])["enabled"] as? Bool == false)
        #expect(manifest["caller"] as? String == "eng@support")
        await f.close()
    }

    @Test func timelineTellsTheStoryInTimeOrderWithStatusNames() async throws {
        let f = try BundleFixture()
        try await f.fill()
        let archive = try await f.bundle(BundleRequest(device: "D1", since: since, until: until))
        let timeline = try archive.member("timeline.txt")
        if ProcessInfo.processInfo.environment["PRINT_TIMELINE"] != nil { print(timeline) }
        let failed = try #require(timeline.range(of: "AccountNotLicensed (200)"))
        let ok = try #require(timeline.range(of: "NewPoliciesReceived (100)"))
        #expect(failed.lowerBound < ok.lowerBound)
        #expect(timeline.contains("management=MAM-WE"))
        #expect(timeline.contains("via registerAndEnrollAccount"))
        #expect(timeline.contains("812 ms"))
        #expect(timeline.contains("SDK retries in 24 h"))
        #expect(timeline.contains("next policy check-in expected ~2026-11-26 19:00Z (8 h)"))
        #expect(timeline.contains("gap of 2 h 56 min"))
        #expect(timeline.contains("IntuneAction    SelectiveWipe result=done"))
        #expect(timeline.contains("WARNING         [MAMEnrollment] policy endpoint slow"))
        #expect(!timeline.contains(BundleFixture.alice.lowercased()))
        let stamps = timeline.split(separator: "\n").compactMap { line -> Int64? in
            guard line.first?.isNumber == true else { return nil }
            return Timestamp.parse(line.prefix(24))
        }
        #expect(stamps.count == 6)  // launch, 2 enrollment calls, action, warning, error
        #expect(stamps == stamps.sorted())
        let summary = try JSONSerialization.jsonObject(with: Data(try archive.member("summary.json").utf8)) as! [String: Any]
        let enrollment = summary["enrollment"] as! [String: Any]
        #expect(enrollment["calls"] as? Int == 2)
        #expect(enrollment["successRate"] as? Double == 0.5)
        let failures = enrollment["failures"] as! [[String: Any]]
        #expect(failures.first?["statusName"] as? String == "AccountNotLicensed")
        #expect((summary["sdkVersions"] as! [String: Int]) == ["19.6.0": 4])
        #expect((summary["flagsSeen"] as! [String: Any])["verbose"] as? Bool == true)
        await f.close()
    }

    @Test func refusesWithoutScopeOrUnknownIncident() async throws {
        let f = try BundleFixture()
        await #expect(throws: BundleError.missingScope) { try await f.builder.prepare(BundleRequest(), now: 0) }
        await #expect(throws: BundleError.unknownIncident("MAM-2222-2222")) {
            try await f.builder.prepare(BundleRequest(incident: "MAM-2222-2222"), now: 0)
        }
        let p = try await f.builder.prepare(BundleRequest(device: "D9"), now: 100 * BundleFixture.hour)
        #expect(p.until - p.since == 24 * BundleFixture.hour)
        await f.close()
    }
}
