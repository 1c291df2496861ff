import Foundation
import TestSupport
import Testing

/// Diagnostic bundles end to end (issue 5, SPEC §6): the built daemon, the built
/// `mamtelemetryctl bundle`, and the system's `unzip`/`tar` as the independent reader.
@Suite(.serialized) struct BundleIntegrationTests {
    /// An incident bundle tells the device's story: its telemetry and logs from two days before
    /// the upload to an hour after, and every record the user shared.
    @Test func incidentBundleHasTheDevicesStoryAndOpensWithUnzip() async throws {
        let fleet = try await BundleFleet.start()
        defer { fleet.cleanUp() }
        // No -o: the default name lands in the working directory.
        let run = try fleet.ctl(["bundle", "--incident", fleet.incident, "--token", fleet.bundleToken])
        #expect(run.status == 0, "\(run.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: fleet.workDirectory.path)
        let archive = try #require(names.first { $0.hasPrefix("mam-bundle-\(fleet.incident)-") && $0.hasSuffix("Z.zip") })
        let path = fleet.workDirectory.appendingPathComponent(archive).path
        #expect(!names.contains { $0.hasSuffix(".part") })
        let device = fleet.devices[0]
        let expectedLogs = try await fleet.ids("/v1/logs?device=\(device)", member: "logs")
            .union(try await fleet.ids("/v1/logs?incident=\(fleet.incident)", member: "logs"))
        let expectedEvents = try await fleet.ids("/v1/events?device=\(device)", member: "events")
        #expect(expectedLogs.count == 5 && expectedEvents.count == 3)
        for line in [
            "saved \(archive)", "scope:     incident \(fleet.incident) (prod)", "story:     device \(device) around the upload",
            "records:   logs 5, telemetry 3", "redaction: ON", "requested: by support-bundle (token", "checksums: OK", "  ok  timeline.txt",
        ] {
            #expect(run.stdout.contains(line), "summary lacks '\(line)':\n\(run.stdout)")
        }
        #expect(try BundleFleet.system("/usr/bin/unzip", ["-t", path]).status == 0)
        let members = try BundleFleet.unpack(path)
        #expect(
            Set(members.keys).isSuperset(of: [
                "manifest.json", "telemetry.ndjson", "logs.ndjson", "timeline.txt", "summary.json", "incident.json",
            ]))

        #expect(BundleFleet.ids(members["logs.ndjson"]) == expectedLogs)
        #expect(BundleFleet.ids(members["telemetry.ndjson"]) == expectedEvents)
        let timeline = String(decoding: members["timeline.txt"] ?? [], as: UTF8.self)
        #expect(timeline.contains("PolicyEndPointNetworkFailure"))
        #expect(timeline.contains("-> next step: Check the device's network, proxy and firewall access"), "\(timeline)")
        #expect(timeline.contains("UPLOAD          \(fleet.incident): the user shared 3 log records with support"), "\(timeline)")
        // On a terminal (a pty from util-linux `script`) the download shows a progress line on stderr.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/script") {
            let out = fleet.workDirectory.appendingPathComponent("tty.zip").path
            let command = [
                BundleFleet.cli.path, "bundle", "--incident", fleet.incident, "-o", out, "--token", fleet.bundleToken, "--url",
                fleet.daemon.baseURL,
            ]
            let tty = try BundleFleet.system("/usr/bin/script", ["-qec", command.joined(separator: " "), "/dev/null"])
            #expect(tty.status == 0 && tty.stdout.contains("receiving bundle: "), "\(tty.stdout)")
            #expect(!run.stderr.contains("receiving bundle"), "no progress line when stderr is not a terminal")
        }
        print("----- timeline.txt (\(fleet.incident)) -----\n\(timeline)----- end -----")
        print("----- mamtelemetryctl output -----\n\(run.stdout)----- end -----")
    }

    @Test func deviceAndIdentityBundlesMatchTheQueryAPIAndKeepPPEApart() async throws {
        let fleet = try await BundleFleet.start()
        defer { fleet.cleanUp() }
        let d = fleet.devices
        // Device A as tar.gz: exactly /v1/events and /v1/logs for device A, nothing from PPE.
        let deviceA = try fleet.download(
            ["--device", d[0], "--format", "tar.gz", "--since", "-2h"], token: fleet.bundleToken, name: "a.tar.gz")
        let listing = try BundleFleet.system("/usr/bin/tar", ["tzf", deviceA.path])
        #expect(listing.status == 0)
        #expect(listing.stdout.contains("telemetry.ndjson") && listing.stdout.contains("manifest.json"))
        #expect(
            BundleFleet.ids(deviceA.members["telemetry.ndjson"]) == (try await fleet.ids("/v1/events?device=\(d[0])", member: "events")))
        #expect(BundleFleet.ids(deviceA.members["logs.ndjson"]) == (try await fleet.ids("/v1/logs?device=\(d[0])", member: "logs")))
        #expect(BundleFleet.ids(deviceA.members["telemetry.ndjson"]).count == 3)
        #expect(!BundleFleet.contains(deviceA.members, fleet.ppeMarker))
        #expect(!BundleFleet.contains(deviceA.members, d[1]))
        let timeline = String(decoding: deviceA.members["timeline.txt"] ?? [], as: UTF8.self)
        #expect(
            timeline.contains("EnrollmentCall  enroll via registerAndEnrollAccount -> PolicyEndPointNetworkFailure (212) FAILED"),
            "\(timeline)")
        let stamps = timeline.split(separator: "\n").compactMap { $0.first?.isNumber == true ? $0.prefix(24) : nil }
        #expect(stamps.count >= 5 && stamps == stamps.sorted(), "timeline out of order: \(stamps)")
        print("----- timeline.txt (device \(d[0])) -----\n\(timeline)----- end -----")

        // The same device with --env ppe: exactly its PPE events.
        let ppe = try fleet.download(["--device", d[0], "--env", "ppe"], token: fleet.bundleToken, name: "a-ppe.zip")
        let ppeIDs = try await fleet.ids("/v1/events?env=ppe&device=\(d[0])", member: "events")
        #expect(ppeIDs.count == 2)
        #expect(BundleFleet.ids(ppe.members["telemetry.ndjson"]) == ppeIDs)
        #expect(BundleFleet.contains(ppe.members, fleet.ppeMarker))

        // Identity, in another casing: devices A and C (Alice), never B (Bob).
        let upn = "ALICE.smith@contoso.COM"
        let query = "identity=" + (upn.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? upn)
        // A token without pii names the user by pseudonym (a UPN is refused to it).
        let pseudonym = try await fleet.daemon.json("/v1/pseudonyms?\(query)")["pseudonym"] as? String ?? "?"
        let identity = try fleet.download(["--identity", pseudonym], token: fleet.bundleToken, name: "by-identity.zip")
        let events = try await fleet.ids("/v1/events?\(query)", member: "events")
        let logs = try await fleet.ids("/v1/logs?\(query)", member: "logs")
        #expect(events.count == 6 && logs.count == 7)
        #expect(BundleFleet.ids(identity.members["telemetry.ndjson"]) == events)
        #expect(BundleFleet.ids(identity.members["logs.ndjson"]) == logs)
        #expect(!BundleFleet.contains(identity.members, d[1]))
        #expect(!BundleFleet.contains(identity.members, fleet.ppeMarker))
        #expect(!identity.stdout.lowercased().contains("alice"), "the summary must not spell out the UPN without pii")
    }

    @Test func withoutPIINoUPNOrEmailAnywhereWithPIIRawValues() async throws {
        let fleet = try await BundleFleet.start()
        defer { fleet.cleanUp() }
        let d = fleet.devices
        let upn = BundleFleet.alice.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? BundleFleet.alice
        let alice = try await fleet.daemon.json("/v1/pseudonyms?identity=\(upn)")["pseudonym"] as? String ?? "?"
        for (scope, format) in [
            (["--device", d[0]], "zip"), (["--incident", fleet.incident], "tar.gz"), (["--identity", alice], "zip"),
        ] {
            let b = try fleet.download(
                scope + ["--format", format], token: fleet.bundleToken, name: "redacted-\(UUID().uuidString).\(format)")
            let raw = try [UInt8](Data(contentsOf: URL(fileURLWithPath: b.path)))
            for secret in BundleFleet.personalData {
                #expect(!BundleFleet.lowered(raw).contains(secret), "\(secret) in the archive bytes of \(scope)")
                #expect(!BundleFleet.contains(b.members, secret), "\(secret) in a member of \(scope)")
            }
            #expect(b.stdout.contains("redaction: ON"))
        }
        // Pseudonyms are stable: two bundles give Alice's records the same pseudonym.
        let first = try fleet.download(["--device", d[0]], token: fleet.bundleToken, name: "p1.zip")
        let second = try fleet.download(["--device", d[2]], token: fleet.bundleToken, name: "p2.zip")
        let p1 = BundleFleet.identities(first.members["telemetry.ndjson"])
        let p2 = BundleFleet.identities(second.members["telemetry.ndjson"])
        #expect(p1.count == 1 && p1 == p2 && !(p1.first ?? "").contains("@"), "\(p1) vs \(p2)")

        let pii = try fleet.download(["--device", d[0]], token: fleet.piiToken, name: "pii.zip")
        #expect(pii.stdout.contains("redaction: OFF"))
        #expect(BundleFleet.contains(pii.members, "alice.smith@contoso.com"))
        #expect(BundleFleet.contains(pii.members, "carol@example.org"))
        #expect(BundleFleet.identities(pii.members["telemetry.ndjson"]) == ["Alice.Smith@Contoso.com"])
        let manifest = parseJSON(pii.members["manifest.json"] ?? [])
        #expect(manifest["caller"] as? String ?? "" == "support-pii (token \(fleet.piiTokenID))")
        #expect((manifest["redaction"] as? [String: Any])?["piiAllowed"] as? Bool == true)
    }

    @Test func verifyPassesOnAGoodArchiveAndFailsOnAFlippedByte() async throws {
        let fleet = try await BundleFleet.start()
        defer { fleet.cleanUp() }
        let zip = try fleet.download(["--device", fleet.devices[0]], token: fleet.bundleToken, name: "good.zip")
        let good = try fleet.ctl(["bundle", "verify", zip.path])
        #expect(good.status == 0 && good.stdout.contains("checksums: OK"), "\(good.stdout)\(good.stderr)")

        // zip: one byte flipped inside the first member's stored data.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: zip.path)))
        let start = 30 + (Int(bytes[26]) | Int(bytes[27]) << 8) + (Int(bytes[28]) | Int(bytes[29]) << 8)
        try #require(bytes[0..<4] == [0x50, 0x4B, 0x03, 0x04] && start + 8 < bytes.count)
        bytes[start + 8] ^= 0x20
        let badZip = fleet.workDirectory.appendingPathComponent("flipped.zip")
        try Data(bytes).write(to: badZip)
        let zipRun = try fleet.ctl(["bundle", "verify", badZip.path])
        #expect(zipRun.status != 0, "\(zipRun.stdout)")

        // tar.gz: a member edited by one byte and repacked with the system tar, so the archive
        // itself is well-formed and only the manifest's checksum can catch it.
        let tgz = try fleet.download(["--device", fleet.devices[0], "--format", "tar.gz"], token: fleet.bundleToken, name: "good.tar.gz")
        let dir = fleet.workDirectory.appendingPathComponent("repack")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var order: [String] = []
        for (name, var content) in tgz.members {
            if name == "logs.ndjson" { content[content.count / 2] ^= 0x01 }
            try Data(content).write(to: dir.appendingPathComponent(name))
            order.append(name)
        }
        let repacked = fleet.workDirectory.appendingPathComponent("flipped.tar.gz").path
        #expect(try BundleFleet.system("/usr/bin/tar", ["czf", repacked, "-C", dir.path] + order.sorted()).status == 0)
        let tarRun = try fleet.ctl(["bundle", "verify", repacked])
        #expect(tarRun.status != 0)
        #expect(tarRun.stderr.contains("MISMATCH logs.ndjson"), "\(tarRun.stderr)")
        #expect(tarRun.stdout.contains("BAD logs.ndjson"))
    }
}

/// A daemon filled with a small fleet — devices A and C used by Alice, B by Bob, PPE test
/// data on A, and one diagnostic upload from A — plus a `bundle` token and a `bundle`+`pii`
/// token, and a working directory for the CLI.
final class BundleFleet: @unchecked Sendable {
    static let alice = "Alice.Smith@Contoso.com"
    static let bob = "bob@fabrikam.com"
    static let aliceOid = "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
    /// Every personal value in the input, lower-cased (identities, emails in text, an object id).
    static let personalData = ["alice.smith@contoso.com", "bob@fabrikam.com", "carol@example.org", aliceOid]
    static var cli: URL { DaemonProcess.packageRoot.appendingPathComponent(".build/debug/mamtelemetryctl") }

    let daemon: DaemonProcess
    let workDirectory: URL
    let devices: [String]
    let ppeMarker: String
    var incident = ""
    var bundleToken = ""
    var piiToken = ""
    var piiTokenID = ""

    private init(daemon: DaemonProcess) throws {
        self.daemon = daemon
        let nonce = UUID().uuidString.prefix(8).lowercased()
        devices = ["dev-a-\(nonce)", "dev-b-\(nonce)", "dev-c-\(nonce)"]
        ppeMarker = "PPE-MARKER-\(nonce)"
        workDirectory = daemon.dataDirectory.deletingLastPathComponent().appendingPathComponent("bundle-cli-\(nonce)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    static func start() async throws -> BundleFleet {
        let daemon = try DaemonProcess()
        try await daemon.start()
        let fleet = try BundleFleet(daemon: daemon)
        do {
            try await fleet.fill()
        } catch {
            fleet.cleanUp()
            throw error
        }
        return fleet
    }

    func cleanUp() {
        daemon.cleanUp()
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func fill() async throws {
        let now = Date().timeIntervalSince1970
        func time(_ minutesAgo: Double) -> String {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.string(from: Date(timeIntervalSince1970: now - minutesAgo * 60))
        }
        let people = [(devices[0], Self.alice), (devices[1], Self.bob), (devices[2], Self.alice)]
        var telemetry: [String] = []
        var logs: [String] = []
        for (i, (device, upn)) in people.enumerated() {
            let base = 50.0 - Double(i)
            let envelope =
                #""appId":"com.contoso.mail","appVersion":"4.2","sdkVersion":"19.6.0","platform":"iOS","deviceId":"\#(device)","sessionId":"s-\#(device)","identity":"\#(upn)","accountId":"\#(Self.aliceOid)","settings":{"VerboseLoggingEnabled":"YES"}"#
            telemetry.append(#"{"name":"AppLaunch","time":"\#(time(base))",\#(envelope),"data":{"managementType":"MAM-WE"}}"#)
            telemetry.append(
                #"{"name":"EnrollmentCall","time":"\#(time(base - 5))",\#(envelope),"data":{"operation":"enroll","api":"registerAndEnrollAccount","statusCode":212,"didSucceed":false,"durationMs":840,"errorString":"policy endpoint unreachable for \#(upn)"}}"#
            )
            telemetry.append(
                #"{"name":"IntuneAction","time":"\#(time(base - 10))",\#(envelope),"data":{"action":"PinPrompt","result":"shown"}}"#)
            logs.append(
                #"{"time":"\#(time(base - 1))","level":"verbose","message":"MSAL token acquired for \#(upn); cc carol@example.org","component":"Identity","appId":"com.contoso.mail","deviceId":"\#(device)","sessionId":"s-\#(device)","identity":"\#(upn)"}"#
            )
            logs.append(
                #"{"time":"\#(time(base - 6))","level":"warning","message":"Enrollment retry scheduled in 24 h","component":"MAMEnrollment","appId":"com.contoso.mail","deviceId":"\#(device)","sessionId":"s-\#(device)","identity":"\#(upn)"}"#
            )
        }
        // PPE test data for device A, which prod bundles must never show.
        for k in 0..<2 {
            telemetry.append(
                #"{"name":"AppLaunch","time":"\#(time(40 - Double(k)))","appId":"com.contoso.mail","deviceId":"\#(devices[0])","identity":"\#(Self.alice)","settings":{"MAMTelemetryUsePPE":true},"data":{"managementType":"\#(ppeMarker)"}}"#
            )
        }
        let t = try await daemon.post(
            "/v1/telemetry", body: Array(telemetry.joined(separator: "\n").utf8), headers: [("Content-Type", "application/x-ndjson")])
        guard t.0 == 200, (parseJSON(t.1)["accepted"] as? Int) == telemetry.count else {
            throw FleetError.setup("telemetry: \(t.0) \(String(decoding: t.1, as: UTF8.self))")
        }
        let l = try await daemon.post(
            "/v1/logs", body: Array(logs.joined(separator: "\n").utf8), headers: [("Content-Type", "application/x-ndjson")])
        guard l.0 == 200 else { throw FleetError.setup("logs: \(l.0) \(String(decoding: l.1, as: UTF8.self))") }

        let upload: [String: Any] = [
            "appId": "com.contoso.mail", "deviceId": devices[0], "sessionId": "s-\(devices[0])", "identity": Self.alice,
            "description": "Cannot open attachments since this morning (I am alice.smith@contoso.com)",
            "logs": [
                ["time": time(20), "level": "info", "message": "Policy check-in started", "component": "MAMPolicyManager"],
                [
                    "time": time(19.5), "level": "verbose",
                    "message": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl for \(Self.alice)", "component": "Identity",
                ],
                [
                    "time": time(19), "level": "error", "message": "Policy check-in failed: PolicyEndPointNetworkFailure (212)",
                    "component": "MAMPolicyManager",
                ],
            ],
        ]
        let u = try await daemon.post(
            "/v1/diagnostics", body: [UInt8](try JSONSerialization.data(withJSONObject: upload)),
            headers: [("Content-Type", "application/json")])
        guard u.0 == 201, let id = (parseJSON(u.1)["incident"] as? [String: Any])?["id"] as? String else {
            throw FleetError.setup("diagnostics: \(u.0) \(String(decoding: u.1, as: UTF8.self))")
        }
        incident = id
        (bundleToken, _) = try await token("support-bundle", ["bundle"])
        (piiToken, piiTokenID) = try await token("support-pii", ["bundle", "pii"])
    }

    private func token(_ name: String, _ scopes: [String]) async throws -> (String, String) {
        let body = try JSONSerialization.data(withJSONObject: ["name": name, "scopes": scopes])
        let (status, answer, _) = try await daemon.post("/v1/tokens", body: [UInt8](body), headers: [("Content-Type", "application/json")])
        let object = parseJSON(answer)
        guard status == 201, let secret = object["token"] as? String, let id = (object["info"] as? [String: Any])?["id"] as? String else {
            throw FleetError.setup("token \(name): \(status) \(String(decoding: answer, as: UTF8.self))")
        }
        return (secret, id)
    }

    /// Record ids the query API returns for a filter (admin token), the reference a bundle is checked against.
    func ids(_ path: String, member: String) async throws -> Set<String> {
        let page = try await daemon.json(path + (path.contains("?") ? "&" : "?") + "limit=10000")
        return Set((page[member] as? [[String: Any]] ?? []).compactMap(Self.recordID))
    }

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the built CLI against this daemon (its URL is added), in the work directory.
    func ctl(_ arguments: [String]) throws -> Run {
        let needsServer = arguments.first == "bundle" && arguments.dropFirst().first != "verify"
        return try Self.system(Self.cli.path, arguments + (needsServer ? ["--url", daemon.baseURL] : []), in: workDirectory)
    }

    struct Downloaded {
        var path: String
        var stdout: String
        var members: [String: [UInt8]]
    }

    /// `mamtelemetryctl bundle <scope> -o NAME --token T`, which must succeed; then unpacked with the system's tools.
    func download(_ scope: [String], token: String, name: String) throws -> Downloaded {
        let path = workDirectory.appendingPathComponent(name).path
        let run = try ctl(["bundle"] + scope + ["-o", path, "--token", token])
        guard run.status == 0 else { throw FleetError.setup("bundle \(scope) exited \(run.status): \(run.stderr)") }
        return Downloaded(path: path, stdout: run.stdout, members: try Self.unpack(path))
    }

    static func system(_ tool: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "MAMTELEMETRY_TOKEN")
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("ctl-\(UUID().uuidString)")
        let err = out.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        p.waitUntilExit()
        return Run(
            status: p.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
            stderr: try String(contentsOf: err, encoding: .utf8))
    }

    /// Unpacks with the system's `unzip` or `tar` (not our own reader) and returns every member.
    static func unpack(_ archive: String) throws -> [String: [UInt8]] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("unpack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let run =
            archive.hasSuffix(".zip")
            ? try system("/usr/bin/unzip", ["-q", archive, "-d", dir.path]) : try system("/usr/bin/tar", ["xzf", archive, "-C", dir.path])
        guard run.status == 0 else { throw FleetError.setup("unpack \(archive): \(run.stderr)") }
        var members: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            members[name] = try [UInt8](Data(contentsOf: dir.appendingPathComponent(name)))
        }
        return members
    }

    static func ids(_ ndjson: [UInt8]?) -> Set<String> {
        Set(lines(ndjson).compactMap(recordID))
    }

    /// A record's id as the API and the bundle spell it (a number per environment's store).
    static func recordID(_ record: [String: Any]) -> String? {
        (record["id"] as? NSNumber)?.stringValue ?? record["id"] as? String
    }

    static func identities(_ ndjson: [UInt8]?) -> Set<String> {
        Set(lines(ndjson).compactMap { $0["identity"] as? String })
    }

    static func lines(_ ndjson: [UInt8]?) -> [[String: Any]] {
        (ndjson ?? []).split(separator: 0x0A).map { parseJSON(Array($0)) }
    }

    static func lowered(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self).lowercased() }

    /// Whether any member holds `needle`, case-insensitively.
    static func contains(_ members: [String: [UInt8]], _ needle: String) -> Bool {
        members.values.contains { lowered($0).contains(needle.lowercased()) }
    }

    enum FleetError: Error { case setup(String) }
}
