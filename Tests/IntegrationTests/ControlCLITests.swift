import Foundation
import TestSupport
import Testing

/// `mamtelemetryctl` end to end against the built daemon: what only the CLI does (following
/// like `journalctl -f`, forgiving device ids, explanations, the printed lines and summaries,
/// the bundle's default name, progress line and `verify`). One daemon for the suite, filled
/// with the bundle fleet once; tests that need more store it under devices of their own.
/// What the routes answer is checked in process (TelemetryServerTests: IncidentRouteTests,
/// BundleRouteTests, VisibilityBundleRouteTests). Serialized: each test spawns CLI processes
/// with Foundation's `Process`, whose exit is not noticed reliably when children overlap.
@Suite(.serialized, .fleetDaemon) struct ControlCLITests {
    static let app = "com.contoso.support"

    var fleet: BundleFleet { get throws { try #require(BundleFleet.shared) } }

    static func log(_ message: String, device: String, minutesAgo: Double = 0, level: String = "info") -> String {
        let time = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-minutesAgo * 60))
        let object: [String: Any] = ["appId": app, "deviceId": device, "level": level, "message": message, "time": time]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    // MARK: Support flow

    @Test func followStartsWithTheLastLinesAndMarksLateArrivals() async throws {
        let d = try fleet.daemon
        let device = "7C3D9E2F-1A2B-4C3D-8E4F-5A6B7C8D9E0F"
        let backlog = (0..<5).map { Self.log("backlog \($0)", device: device, minutesAgo: 1 - Double($0) / 10) }
        #expect(try await d.ingestLogs(backlog.joined(separator: "\n")).0 == 200)
        // A typed prefix in lower case, and a window that the late record is far outside of.
        let ctl = try ControlProcess(["logs", "--device", "7c3d9e2f", "--since", "-5m", "-f", "-n", "2"], daemon: d)
        defer {
            if ctl.process.isRunning {
                kill(ctl.process.processIdentifier, SIGKILL)
                ctl.process.waitUntilExit()
            }
        }
        #expect(try await ctl.waitForOutput(containing: "backlog 4"), "\(ctl.standardOutput) \(ctl.standardError)")
        #expect(ctl.standardOutput.split(separator: "\n").count == 2 && ctl.standardOutput.contains("backlog 3"), "\(ctl.standardOutput)")
        #expect(ctl.standardError.contains("following device \(device) (matched '7c3d9e2f')"), "\(ctl.standardError)")
        // The stream subscribes after its backlog: send until it shows what arrives.
        var sent = 0
        while !ctl.standardOutput.contains("uploaded late"), sent < 20 {
            #expect(try await d.ingestLogs(Self.log("uploaded late", device: device, minutesAgo: 20, level: "error")).0 == 200)
            sent += 1
            _ = try await ctl.waitForOutput(containing: "uploaded late", timeout: .seconds(1))
        }
        let late = try #require(ctl.standardOutput.split(separator: "\n").first { $0.contains("uploaded late") })
        #expect(late.hasSuffix("[arrived 20 min late]"), "\(late)")
        #expect(!ctl.standardOutput.contains("backlog 0"))
        kill(ctl.process.processIdentifier, SIGTERM)
        _ = try await ctl.waitForExit(timeout: .seconds(5))
    }

    /// A user's logs include their device's, by UPN and by pseudonym; explanations; a device
    /// id forgiven its case and cut short while it names one device; the incident list and the
    /// story bundle without pii.
    @Test func theUsersStoryExplanationsAndForgivingIDs() async throws {
        let d = try fleet.daemon
        let device = "4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B"
        let events = [
            #"{"name":"AppLaunch","appId":"\#(Self.app)","deviceId":"\#(device)","identity":"Jane@Contoso.com"}"#,
            #"{"name":"EnrollmentCall","appId":"\#(Self.app)","deviceId":"\#(device)","data":{"operation":"enroll","statusCode":225}}"#,
        ]
        #expect(try await d.post("/v1/telemetry", body: Array(events.joined(separator: "\n").utf8)).0 == 200)
        #expect(try await d.ingestLogs(Self.log("no app protection policy for this user", device: device, level: "error")).0 == 200)
        let token = try await d.createToken(name: "engineer", scopes: ["read", "bundle"])

        // By UPN: a token with the pii scope (the admin's); without it the user is a pseudonym.
        let logs = try await ControlProcess.run(["logs", "--identity", "jane@contoso.com", "--since", "-1h"], daemon: d)
        #expect(logs.status == 0, "\(logs.errors)")
        #expect(logs.output.contains("no app protection policy for this user"), "the device's log is in the user's view: \(logs.output)")
        #expect(logs.output.contains("with the records of the devices they used: \(device)"), "\(logs.output)")
        let own = try await ControlProcess.run(["logs", "--identity", "jane@contoso.com", "--no-devices"], daemon: d)
        #expect(own.status == 0 && !own.output.contains("no app protection policy"), "\(own.output)")
        // Without pii, by the pseudonym the engineer is shown: the same story, the UPN never shown.
        let pseudonym = try await ControlProcess.run(["pseudonym", "jane@contoso.com"], daemon: d)
        let shown = pseudonym.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let byPseudonym = try await ControlProcess.run(["logs", "--identity", shown, "--since", "-1h"], daemon: d, token: token)
        #expect(byPseudonym.status == 0 && shown.hasPrefix("user-"), "\(byPseudonym.errors)")
        #expect(byPseudonym.output.contains("no app protection policy for this user"), "\(byPseudonym.output)")
        #expect(byPseudonym.output.contains("user \(shown): with the records of the devices they used: \(device)"))
        #expect(!byPseudonym.output.lowercased().contains("jane@contoso.com"), "\(byPseudonym.output)")
        let explained = try await ControlProcess.run(["events", "--device", device.lowercased()], daemon: d, token: token)
        #expect(explained.output.contains("LicensedNotTargeted (225)"))
        #expect(
            explained.output.contains("Next: Assign an app protection policy covering this app to a group the user is in."),
            "\(explained.output)")

        let ambiguous = try await d.ingestLogs(
            #"{"appId":"\#(Self.app)","deviceId":"4F0E9999-0000-4000-8000-000000000000","message":"another device"}"#)
        #expect(ambiguous.0 == 200)
        let refused = try await ControlProcess.run(["logs", "--device", "4f0e"], daemon: d)
        #expect(refused.status != 0 && refused.errors.contains("matches 2 devices"), "\(refused.errors)")

        let upload =
            #"{"appId":"\#(Self.app)","deviceId":"\#(device)","identity":"jane@contoso.com","description":"jane@contoso.com: not targeted"}"#
        #expect(try await d.post("/v1/diagnostics", body: Array(upload.utf8), headers: [("Content-Type", "application/json")]).0 == 201)
        let incidents = try await ControlProcess.run(["incidents", "--since", "-1d", "--device", "4f0e2a1b"], daemon: d, token: token)
        #expect(
            incidents.status == 0 && incidents.output.contains("MAM-") && incidents.output.contains("[withheld: "), "\(incidents.output)")
        #expect(
            incidents.output.contains("a token with the pii scope shows it") && !incidents.output.contains("jane"), "\(incidents.output)")
        let id = try #require(incidents.output.firstMatch(of: /MAM-[A-Z0-9]{4}-[A-Z0-9]{4}/)).0.description
        let story = try await ControlProcess.run(
            ["bundle", "--incident", id, "-o", d.dataDirectory.appendingPathComponent("s.zip").path], daemon: d, token: token)
        #expect(
            story.status == 0 && story.output.contains("story:     device \(device) around the upload"), "\(story.output)\(story.errors)")
        #expect(story.output.contains("records:   logs 1, telemetry 2"), "\(story.output)")
    }

    @Test func statusCodesExplainByNameOrNumber() async throws {
        let d = try fleet.daemon
        let codes = try await ControlProcess.run(["status-codes", "licensedNotTargeted"], daemon: d)
        #expect(codes.output.contains("225") && codes.output.contains("no app protection policy targets them"), "\(codes.output)")
        let one = try await ControlProcess.run(["status-codes", "200", "--output", "json"], daemon: d)
        let explained = try JSONSerialization.jsonObject(with: Data(one.output.utf8)) as? [String: Any]
        #expect(
            (explained?["statusCodes"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["AccountNotLicensed"], "\(one.output)"
        )
        #expect(try await ControlProcess.run(["status-codes", "999"], daemon: d).status != 0)
    }

    // MARK: Incidents and pseudonyms

    /// `mamtelemetryctl logs --incident ID`, typed in lower case: exactly the upload's records,
    /// each line naming the incident, app and device, levels as the device wrote them.
    @Test func incidentLogsPrintExactlyTheUploadsRecords() async throws {
        let d = try fleet.daemon
        let incident = try await IncidentFixture.store(through: d)
        let (id, expected) = (incident.id, IncidentFixture.messages)
        let ctl = try await ControlProcess.run(["logs", "--incident", id.lowercased()], daemon: d)
        #expect(ctl.status == 0, "\(ctl.errors)")
        let lines = ctl.output.split(separator: "\n").map(String.init)
        #expect(lines.count == expected.count, "\(ctl.output)")
        for message in expected {
            let line = try #require(lines.first { $0.hasSuffix(" " + message) }, "\(message) not printed: \(ctl.output)")
            #expect(line.contains("{\(id)}"), "\(line)")
            #expect(line.contains("com.contoso.mail/\(incident.device)"), "\(line)")
        }
        #expect(lines.first { $0.hasSuffix("[Files] incident one") }?.contains(" VERBOSE ") == true, "\(lines)")
        #expect(lines.first { $0.hasSuffix(" incident five") }?.contains(" INFO ") == true, "\(lines)")
        #expect(!ctl.output.contains("automatic") && !ctl.output.contains("other incident"))
        let json = try await ControlProcess.run(["logs", "--incident", id, "--output", "ndjson"], daemon: d)
        #expect(Set(json.output.split(separator: "\n").compactMap { parseJSON(Array($0.utf8))["message"] as? String }) == Set(expected))

        let ppe = try await IncidentFixture.storePPE(through: d)
        let inPPE = try await ControlProcess.run(["logs", "--env", "ppe", "--incident", ppe], daemon: d)
        #expect(inPPE.status == 0 && inPPE.output.contains("ppe incident"), "\(inPPE.output) \(inPPE.errors)")
    }

    /// `mamtelemetryctl pseudonym UPN` (any case) prints what a read token is shown, and the
    /// journal match; without pii it is refused.
    @Test func pseudonymCommandNeedsPIIAndPrintsWhatQueriesShow() async throws {
        let d = try fleet.daemon
        let device = "vis-\(UUID().uuidString.prefix(8))"
        _ = try await VisibilityFixture.store(device: device, through: d)
        let read = try await d.createToken(name: "reader", scopes: ["read"])
        let readPII = try await d.createToken(name: "reader-pii", scopes: ["read", "pii"])
        let (status, body) = try await d.get("/v1/logs?device=\(device)", headers: [("Authorization", "Bearer \(read)")])
        #expect(status == 200)
        let shown = try #require((parseJSON(body)["logs"] as? [[String: Any]])?.first?["identity"] as? String)

        let cli = try await ControlProcess.run(["pseudonym", "megan.BOWEN@contoso.com"], daemon: d, token: readPII)
        #expect(cli.status == 0, "\(cli.errors)")
        #expect(cli.output == shown + "\n")
        #expect(cli.errors.contains("MAM_IDENTITY_HASH=\(shown)"))
        let refused = try await ControlProcess.run(["pseudonym", VisibilityFixture.upn], daemon: d, token: read)
        #expect(refused.status != 0 && refused.errors.contains("pii"), "\(refused.errors)")
    }

    // MARK: Bundles

    /// `bundle --incident` without -o saves under the daemon's suggested name in the working
    /// directory, leaves no partial file, and prints a summary that reads like the archive.
    @Test func incidentBundleSavesUnderItsNameAndSummarises() async throws {
        let fleet = try fleet
        let (f, device) = (fleet.fixture, fleet.fixture.devices[0])
        let here = fleet.workDirectory.appendingPathComponent("default-name")
        try FileManager.default.createDirectory(at: here, withIntermediateDirectories: true)
        let run = try fleet.ctl(["bundle", "--incident", f.incident, "--token", f.bundleToken], in: here)
        #expect(run.status == 0, "\(run.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: here.path)
        let archive = try #require(names.first { $0.hasPrefix("mam-bundle-\(f.incident)-") && $0.hasSuffix("Z.zip") })
        #expect(!names.contains { $0.hasSuffix(".part") })
        for line in [
            "saved \(archive)", "scope:     incident \(f.incident) (prod)", "story:     device \(device) around the upload",
            "records:   logs 5, telemetry 3", "redaction: ON", "requested: by support-bundle (token", "checksums: OK", "  ok  timeline.txt",
        ] {
            #expect(run.stdout.contains(line), "summary lacks '\(line)':\n\(run.stdout)")
        }
        #expect(try BundleFleet.system("/usr/bin/unzip", ["-t", here.appendingPathComponent(archive).path]).status == 0)
        // On a terminal (a pty from util-linux `script`) the download shows a progress line on stderr.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/script") {
            let out = fleet.workDirectory.appendingPathComponent("tty.zip").path
            let command = [
                BundleFleet.cli.path, "bundle", "--incident", f.incident, "-o", out, "--token", f.bundleToken, "--url",
                fleet.daemon.baseURL,
            ]
            let tty = try BundleFleet.system("/usr/bin/script", ["-qec", command.joined(separator: " "), "/dev/null"])
            #expect(tty.status == 0 && tty.stdout.contains("receiving bundle: "), "\(tty.stdout)")
            #expect(!run.stderr.contains("receiving bundle"), "no progress line when stderr is not a terminal")
        }
        print("----- mamtelemetryctl output -----\n\(run.stdout)----- end -----")
    }

    /// The summary says whether the archive is redacted, and never spells out a UPN without pii;
    /// `--env` and `--since` reach the route.
    @Test func bundleSummariesSayWhatTheyWithholdAndFlagsReachTheRoute() async throws {
        let fleet = try fleet
        let f = fleet.fixture
        let upn = BundleFleetFixture.alice.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let alice = try await fleet.daemon.json("/v1/pseudonyms?identity=\(upn)")["pseudonym"] as? String ?? "?"
        for (scope, format) in [
            (["--device", f.devices[0]], "zip"), (["--incident", f.incident], "tar.gz"), (["--identity", alice], "zip"),
        ] {
            let b = try fleet.download(scope + ["--format", format], token: f.bundleToken, name: "redacted-\(UUID().uuidString).\(format)")
            #expect(b.stdout.contains("redaction: ON"), "\(b.stdout)")
            #expect(!b.stdout.lowercased().contains("alice"), "the summary must not spell out the UPN without pii")
            #expect(!b.members.isEmpty)
        }
        let pii = try fleet.download(["--device", f.devices[0]], token: f.piiToken, name: "pii.zip")
        #expect(pii.stdout.contains("redaction: OFF"))
        let ppe = try fleet.download(["--device", f.devices[0], "--env", "ppe", "--since", "-2h"], token: f.bundleToken, name: "ppe.zip")
        #expect(BundleFleetFixture.contains(ppe.members, f.ppeMarker))
        let ppeIDs = try await fleet.ids("/v1/events?env=ppe&device=\(f.devices[0])", member: "events")
        #expect(ppeIDs.count == 2 && BundleFleetFixture.ids(ppe.members["telemetry.ndjson"]) == ppeIDs)
    }

    @Test func verifyPassesOnAGoodArchiveAndFailsOnAFlippedByte() async throws {
        let fleet = try fleet
        let f = fleet.fixture
        let zip = try fleet.download(["--device", f.devices[0]], token: f.bundleToken, name: "good.zip")
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
        let tgz = try fleet.download(["--device", f.devices[0], "--format", "tar.gz"], token: f.bundleToken, name: "good.tar.gz")
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

/// The README's runnable examples (a fenced `sh` block after `<!-- readme-test: run -->`)
/// are run exactly as printed, with bash, against a daemon of their own (the walk-through
/// expects a store holding only what it sent): only the environment the
/// examples themselves read is set (`MAMTELEMETRY_URL`, `MAMTELEMETRY_TOKEN`, and `PATH`
/// with the built `mamtelemetryctl`), so a README that drifts from the CLI or the API fails here.
@Suite struct ReadmeExampleTests {
    static let marker = "<!-- readme-test: run -->"

    /// The text of every fenced block that directly follows the marker.
    static func runnableBlocks(_ readme: String) -> [String] {
        readme.components(separatedBy: marker).dropFirst().compactMap { rest in
            let lines = rest.split(separator: "\n", omittingEmptySubsequences: false).drop { $0.isEmpty }
            guard lines.first == "```sh" else { return nil }
            return lines.dropFirst().prefix { $0 != "```" }.joined(separator: "\n")
        }
    }

    @Test func readmeExamplesRunAsPrinted() async throws {
        let readme = try String(contentsOf: DaemonProcess.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = Self.runnableBlocks(readme)
        #expect(readme.components(separatedBy: Self.marker).count - 1 == blocks.count, "a marker is not followed by a ```sh block")
        try #require(!blocks.isEmpty, "no README block is marked \(Self.marker)")

        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let path =
            DaemonProcess.binary.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        for block in blocks {
            let run = try BundleFleet.system(
                "/bin/bash", ["-euo", "pipefail", "-c", block], in: d.dataDirectory,
                environment: ["MAMTELEMETRY_URL": d.baseURL, "MAMTELEMETRY_TOKEN": d.adminToken ?? "", "PATH": path, "NO_COLOR": "1"])
            #expect(run.status == 0, "README block failed (\(run.status)):\n\(block)\n--- stdout\n\(run.stdout)\n--- stderr\n\(run.stderr)")
            // What the README says the commands print, they print.
            if block.contains("/v1/telemetry"), !block.contains("bundle --incident") {
                #expect(run.stdout.contains(#""accepted":2"#), "\(run.stdout)")
                #expect(run.stdout.contains("AppLaunch") && run.stdout.contains("EnrollmentCall"), "\(run.stdout)")
                #expect(run.stdout.contains("[Enrollment] token expired"), "\(run.stdout)")
                #expect(run.stdout.contains(#""eventId":"e-2""#), "the ndjson example: \(run.stdout)")
            }
            // The support engineer's walk-through tells the story it promises.
            if block.contains("bundle --incident") {
                for expected in [
                    "The app says I am not licensed",  // incidents: what the user wrote (admin token: pii)
                    "Enrollment failed: the account has no Intune license",  // her device's log, in her view
                    "AccountNotLicensed (200): The user's tenant uses app protection, but the user has no Intune license.",
                    "Assign an Intune license to the user",
                    "device 4f0e2a1b: matched 4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B",
                    "nearest ids: 4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B",
                    "story:     device 4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B around the upload",
                    "checksums: OK", "UPLOAD          MAM-", "(shared in MAM-",
                    "-> next step: Assign an Intune license to the user",
                    "100.0% of 1",  // stats apps: the rate beside its volume
                ] {
                    #expect(run.stdout.contains(expected), "walk-through output lacks '\(expected)':\n\(run.stdout)")
                }
                // Her story takes in her device, asked by UPN and by pseudonym as a token without
                // pii asks (the list's order is the backend's: newest batch or newest record first).
                for user in ["jane@contoso\\.com", "user-[0-9a-f]{24}"] {
                    let line = #"user \#(user): with the records of the devices they used: [^\n]*4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B"#
                    #expect(run.stdout.range(of: line, options: .regularExpression) != nil, "no '\(line)' in:\n\(run.stdout)")
                }
                // --around keeps the level filter: the info line is not in the moment's view.
                let afterCodes = run.stdout.components(separatedBy: "200   AccountNotLicensed").last ?? ""
                let moment = afterCodes.components(separatedBy: "device 4f0e2a1b: matched").first ?? ""
                #expect(moment.contains("Enrollment failed") && moment.contains("No policy cached"), "\(moment)")
                #expect(!moment.contains("Next enrollment attempt"), "\(moment)")
            }
        }
    }
}
