import Foundation
import TestSupport
import Testing

/// The journald mirror end to end (issue 3, SPEC §5, §11): the built daemon runs inside the
/// real-journald harness, records are posted over HTTP, and `journalctl -D` reads them back
/// with every field, the right priorities and no raw UPN; the daemon's own log carries
/// `MESSAGE_ID`s and code locations, and `journalctl -x` explains them from the catalog.
@Suite(.serialized, .enabled(if: JournaldHarness.isAvailable, "needs root, unshare and systemd-journald"))
struct JournaldMirrorTests {
    /// `DaemonMessageID.started` / `.stopped` (Sources/Systemd/DaemonMessageID.swift; this
    /// target does not link `Systemd`). Stable by contract, so spelled out here.
    static let startedID = "a6099522270d4485853645158218332e"
    static let stoppedID = "306032cd1e304418aad03bb2f01d37c6"
    static let catalog = DaemonProcess.packageRoot.appendingPathComponent("systemd/mamtelemetryd.catalog")
    static let upn = "Megan.Bowen@Contoso.com"

    @Test func recordsPostedOverHTTPComeBackThroughJournalctl() async throws {
        let harness = try JournaldHarness()
        defer { harness.remove() }
        // Personal data mirrored as sent, so every level's message can be compared here; the
        // default (withheld) is JournalExcerptTests.theMirrorWithholdsVerboseTextByDefault.
        let (d, daemon) = try await harness.launchDaemon(["--journal-personal-data", "include"])
        defer { try? FileManager.default.removeItem(at: d.dataDirectory) }
        defer { Self.stop(daemon, harness) }
        let readiness = try await d.json("/readyz")
        #expect((readiness["checks"] as? [String: [String: Any]])?["journal"]?["ok"] as? Bool == true, "\(readiness)")

        let tag = UUID().uuidString.prefix(8).lowercased()
        let deviceA = "jd-a-\(tag)"
        let deviceB = "jd-b-\(tag)"
        let levels = ["error", "warning", "info", "verbose"]
        let priorities = ["error": "3", "warning": "4", "info": "6", "verbose": "7"]
        // Device A: prod, the UPN in several casings. Device B: PPE, one record without
        // identity and one without component. One opted-out record that must go nowhere.
        let casings = [Self.upn, Self.upn.uppercased(), Self.upn.lowercased(), Self.upn]
        var lines: [[String: Any]] = []
        for (i, level) in levels.enumerated() {
            lines.append([
                "time": "2026-11-21T10:00:0\(i).123Z", "level": level, "message": "A \(level) \(tag)",
                "appId": "com.contoso.mail", "deviceId": deviceA, "sessionId": "sess-a", "component": "Comp\(level)",
                "identity": casings[i],
            ])
            var b: [String: Any] = [
                "time": "2026-11-21T11:00:0\(i).456Z", "level": level, "message": "B \(level) \(tag)",
                "appId": "com.contoso.test", "deviceId": deviceB, "sessionId": "sess-b",
                "settings": ["MAMTelemetryUsePPE": true],
            ]
            if level != "info" { b["identity"] = Self.upn }
            if level != "verbose" { b["component"] = "PPE\(level)" }
            lines.append(b)
        }
        lines.append([
            "level": "error", "message": "dropped-\(tag)", "appId": "com.contoso.mail", "deviceId": deviceA,
            "identity": Self.upn, "settings": ["MAMTelemetryDisabled": true],
        ])
        let ndjson = try lines.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let (status, answer) = try await d.ingestLogs(ndjson.joined(separator: "\n"))
        #expect(status == 200, "\(answer)")
        #expect(answer["env"] as? [String: Int] == ["prod": 4, "ppe": 4])
        #expect((answer["dropped"] as? [String: Int])?["telemetryDisabled"] == 1)

        // A diagnostic upload from device A: an incident.
        let (uploadStatus, upload) = try await d.diagnose([
            "appId": "com.contoso.mail", "deviceId": deviceA, "sessionId": "sess-a", "identity": Self.upn.uppercased(),
            "description": "cannot open attachments", "settings": ["MAMTelemetryUsePPE": false],
            "logs": [
                ["time": "2026-11-21T12:00:00.000Z", "level": "error", "message": "I error \(tag)", "component": "Files"],
                ["time": "2026-11-21T12:00:01.000Z", "level": "verbose", "message": "I verbose \(tag)"],
            ],
            "text": "2026-11-21T12:00:02.000Z [WARNING] [Viewer] I warning \(tag)",
        ])
        #expect(uploadStatus == 201, "\(upload)")
        let incident = try #require((upload["incident"] as? [String: Any])?["id"] as? String)

        // Telemetry events — for device A too, and with the UPN — are never mirrored.
        let telemetryDevice = "jd-tel-\(tag)"
        let events = [
            #"{"name":"AppLaunch","appId":"com.contoso.mail","deviceId":"\#(telemetryDevice)","identity":"\#(Self.upn)"}"#,
            #"{"name":"AppLaunch","appId":"com.contoso.mail","deviceId":"\#(deviceA)","identity":"\#(Self.upn)"}"#,
            #"{"name":"EnrollmentResult","appId":"com.contoso.mail","deviceId":"\#(telemetryDevice)","statusCode":200}"#,
        ]
        let (telemetryStatus, _, _) = try await d.post("/v1/telemetry", body: Array(events.joined(separator: "\n").utf8))
        #expect(telemetryStatus == 200)

        // Read back. Device A: 4 automatic + 3 incident records, exactly.
        let a = try await harness.waitForEntries(["MAM_DEVICE_ID=\(deviceA)"], count: 7)
        let b = try await harness.waitForEntries(["MAM_DEVICE_ID=\(deviceB)"], count: 4)
        try await Task.sleep(for: .milliseconds(500))  // anything extra would arrive by now
        #expect(try harness.entries(["MAM_DEVICE_ID=\(deviceA)"]).count == 7)
        #expect(try harness.entries(["MAM_DEVICE_ID=\(deviceB)"]).count == 4)
        #expect(
            Set(a.compactMap { $0["MESSAGE"] })
                == Set(levels.map { "A \($0) \(tag)" } + ["I error \(tag)", "I verbose \(tag)", "I warning \(tag)"]))
        #expect(Set(b.compactMap { $0["MESSAGE"] }) == Set(levels.map { "B \($0) \(tag)" }))

        var hashes = Set<String>()
        for (i, level) in levels.enumerated() {
            let entry = try #require(a.first { $0["MESSAGE"] == "A \(level) \(tag)" })
            #expect(entry["PRIORITY"] == priorities[level])
            #expect(entry["SYSLOG_IDENTIFIER"] == "mamtelemetryd")
            #expect(entry["MAM_APP_ID"] == "com.contoso.mail")
            #expect(entry["MAM_DEVICE_ID"] == deviceA)
            #expect(entry["MAM_SESSION_ID"] == "sess-a")
            #expect(entry["MAM_ENV"] == "prod")
            #expect(entry["MAM_LEVEL"] == level)
            #expect(entry["MAM_COMPONENT"] == "Comp\(level)")
            #expect(entry["MAM_EVENT_TIME"] == "2026-11-21T10:00:0\(i).123Z")
            #expect(entry["MAM_INCIDENT_ID"] == nil)
            let hash = try #require(entry["MAM_IDENTITY_HASH"], "\(entry)")
            #expect(!hash.isEmpty && !hash.lowercased().contains("megan") && !hash.contains("@"))
            hashes.insert(hash)

            let ppe = try #require(b.first { $0["MESSAGE"] == "B \(level) \(tag)" })
            #expect(ppe["PRIORITY"] == priorities[level])
            #expect(ppe["MAM_ENV"] == "ppe")
            #expect(ppe["MAM_APP_ID"] == "com.contoso.test")
            #expect(ppe["MAM_LEVEL"] == level)
            #expect(ppe["MAM_EVENT_TIME"] == "2026-11-21T11:00:0\(i).456Z")
            // Empty fields are left out, not written blank.
            #expect(ppe["MAM_COMPONENT"] == (level == "verbose" ? nil : "PPE\(level)"))
            #expect((ppe["MAM_IDENTITY_HASH"] == nil) == (level == "info"))
            if let h = ppe["MAM_IDENTITY_HASH"] { hashes.insert(h) }
        }
        // The hash is of the case-folded identity: one person, one hash, in both environments.
        #expect(hashes.count == 1, "\(hashes)")

        // The incident: its records carry its id, PRIORITY by level, and the same identity hash.
        let inIncident = try harness.entries(["MAM_INCIDENT_ID=\(incident)"])
        #expect(Set(inIncident.compactMap { $0["MESSAGE"] }) == ["I error \(tag)", "I verbose \(tag)", "I warning \(tag)"])
        #expect(
            inIncident.allSatisfy {
                $0["MAM_DEVICE_ID"] == deviceA && $0["MAM_ENV"] == "prod" && $0["MAM_IDENTITY_HASH"].map(hashes.contains) == true
            })
        #expect(inIncident.first { $0["MAM_LEVEL"] == "warning" }?["MAM_COMPONENT"] == "Viewer")
        #expect(inIncident.first { $0["MAM_LEVEL"] == "warning" }?["PRIORITY"] == "4")
        #expect(inIncident.first { $0["MAM_LEVEL"] == "verbose" }?["PRIORITY"] == "7")

        // Field matches combine like journalctl's: PPE only, and priority ranges.
        #expect(try harness.entries(["MAM_ENV=ppe"]).count == 4)
        #expect(try harness.entries(["MAM_DEVICE_ID=\(deviceA)", "PRIORITY=3"]).count == 2)
        #expect(try Self.journalctl(harness, ["-p", "warning", "MAM_DEVICE_ID=\(deviceB)"]).count == 2)
        #expect(try Self.journalctl(harness, ["-t", "mamtelemetryd", "MAM_DEVICE_ID=\(deviceB)"]).count == 4)

        // Telemetry events and dropped records are not in the journal.
        #expect(try harness.entries(["MAM_DEVICE_ID=\(telemetryDevice)"]).isEmpty)
        #expect(try harness.entries(["MESSAGE=dropped-\(tag)"]).isEmpty)

        // The daemon's own "started" entry.
        let started = try #require(try harness.entries(["MESSAGE_ID=\(Self.startedID)"]).first)
        #expect(started["MESSAGE"] == "mamtelemetryd started")
        #expect(started["SYSLOG_IDENTIFIER"] == "mamtelemetryd")
        #expect(started["PRIORITY"] == "5")
        #expect(started["CODE_FILE"]?.hasSuffix("Daemon.swift") == true, "\(started)")
        #expect(started["CODE_LINE"].flatMap(Int.init).map { $0 > 0 } == true, "\(started)")
        #expect(started["CODE_FUNC"]?.isEmpty == false, "\(started)")
        #expect(started["_PID"] != nil)

        // Stop the daemon; the harness then stops journald (which syncs) and exits with
        // the daemon's status.
        Self.terminateCommand(of: harness, daemon)
        let exited = Self.waitForExit(daemon, timeout: 20)
        #expect(exited, "harness did not exit")
        if exited { #expect(daemon.terminationStatus == 0, "\((try? String(contentsOf: d.logFile, encoding: .utf8)) ?? "")") }
        let own = try harness.entries(["SYSLOG_IDENTIFIER=mamtelemetryd"]).filter { $0["MAM_DEVICE_ID"] == nil }
        let stoppedEntries = own.filter { $0["MESSAGE_ID"] == Self.stoppedID }
        #expect(stoppedEntries.last?["MESSAGE"] == "mamtelemetryd stopped", "\(own.map { ($0["MESSAGE"] ?? "", $0["MESSAGE_ID"] ?? "") })")
        #expect(stoppedEntries.last?["CODE_FILE"]?.hasSuffix("Daemon.swift") == true)
        // The catalog's "stopped after draining" marks only the end of the drain.
        #expect(stoppedEntries.count == 1, "\(stoppedEntries.map { $0["MESSAGE"] ?? "" })")

        // No raw UPN in any casing: not in what journalctl shows (every field, export
        // format), and not in the journal files' bytes (the harness writes them uncompressed).
        let export = try JournaldHarness.journalctl(["-D", harness.journalDirectory.path, "-o", "export", "--no-pager"])
        #expect(export.status == 0)
        #expect(export.standardOutput.contains("A error \(tag)"))
        #expect(!export.standardOutput.lowercased().contains(Self.upn.lowercased()))
        var journalBytes = 0
        var filesWithRecords = 0  // the positive control: the grep does see mirrored text
        let files =
            FileManager.default.enumerator(at: harness.journalDirectory, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? []
        for file in files where file.pathExtension == "journal" {
            let raw = try Data(contentsOf: file)
            journalBytes += raw.count
            if raw.range(of: Data("A error \(tag)".utf8)) != nil { filesWithRecords += 1 }
            let folded = Data(raw.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 })
            #expect(folded.range(of: Data(Self.upn.lowercased().utf8)) == nil, "raw UPN in \(file.lastPathComponent)")
            #expect(folded.range(of: Data("megan.bowen".utf8)) == nil, "UPN local part in \(file.lastPathComponent)")
            #expect(raw.range(of: Data(telemetryDevice.utf8)) == nil, "telemetry in \(file.lastPathComponent)")
            #expect(raw.range(of: Data("dropped-\(tag)".utf8)) == nil, "dropped record in \(file.lastPathComponent)")
        }
        #expect(filesWithRecords > 0, "the mirrored records were not found in the raw journal files")
        #expect(journalBytes > 0, "no journal files under \(harness.journalDirectory.path)")

        try Self.catalogExplainsStarted(harness)
    }

    /// `journalctl -x` with the shipped catalog. journalctl refuses `-D` together with
    /// `--root` ("Please specify at most one of -D/--directory=, ..., --root="), and in
    /// systemd 252 it reads the catalog only from the fixed `/var/lib/systemd/catalog/database`
    /// (with `--root` it finds the journal under the root but shows no explanation). So the
    /// database is built under a temporary root with `--update-catalog`, then `journalctl
    /// -D ... -x` runs in a private mount namespace where a tmpfs over `/var/lib/systemd`
    /// holds that database — the host's catalog is never read or written.
    static func catalogExplainsStarted(_ harness: JournaldHarness) throws {
        let root = try buildCatalogDatabase()
        defer { try? FileManager.default.removeItem(at: root) }
        let database = root.appendingPathComponent("var/lib/systemd/catalog/database")
        let subject = try catalogSubject(of: startedID)

        let refused = try JournaldHarness.journalctl(["-D", harness.journalDirectory.path, "--root=\(root.path)", "-x", "--no-pager"])
        #expect(refused.status != 0, "journalctl accepted -D with --root")

        let explained = try explain(harness, database: database)
        #expect(explained.status == 0, "\(explained.standardError)")
        #expect(explained.standardOutput.contains("mamtelemetryd started"), "\(explained.standardOutput)")
        #expect(explained.standardOutput.contains(subject), "\(explained.standardOutput)")
        #expect(explained.standardOutput.contains("Defined-By: mamtelemetryd"))
        // Control: without the database, the same command shows no explanation.
        let bare = try explain(harness, database: nil)
        #expect(bare.standardOutput.contains("mamtelemetryd started"))
        #expect(!bare.standardOutput.contains(subject))
    }

    /// A temporary root whose `var/lib/systemd/catalog/database` journalctl built from the
    /// shipped catalog; the caller deletes it.
    static func buildCatalogDatabase() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mamtelemetryd-catalog-\(UUID().uuidString)")
        let catalogDirectory = root.appendingPathComponent("usr/lib/systemd/catalog")
        try FileManager.default.createDirectory(at: catalogDirectory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: catalog, to: catalogDirectory.appendingPathComponent("mamtelemetryd.catalog"))
        let update = try JournaldHarness.journalctl(["--root=\(root.path)", "--update-catalog"])
        #expect(update.status == 0, "\(update.standardError)")
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("var/lib/systemd/catalog/database").path))
        return root
    }

    /// The `Subject:` line the shipped catalog gives `id`.
    static func catalogSubject(of id: String) throws -> String {
        let text = try String(contentsOf: catalog, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "-- \(id)\n").dropFirst().first, "no catalog entry \(id)")
        return try #require(section.split(separator: "\n").first { $0.hasPrefix("Subject: ") }.map(String.init))
    }

    /// `journalctl -D <journal> -x MESSAGE_ID=<id>` (or `match`) with `database` (or none) as
    /// the catalog, in a private mount namespace.
    static func explain(
        _ harness: JournaldHarness, database: URL?, messageID: String = startedID, match: String? = nil
    ) throws -> JournaldHarness.Output {
        let script = """
            set -e
            mount -t tmpfs -o mode=0755 tmpfs /var/lib/systemd
            mkdir -p /var/lib/systemd/catalog
            if [ -n "$1" ]; then cp "$1" /var/lib/systemd/catalog/database; fi
            exec journalctl -D "$2" -x --no-pager \(match ?? "MESSAGE_ID=\(messageID)")
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = [
            "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", database?.path ?? "", harness.journalDirectory.path,
        ]
        process.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "SYSTEMD_PAGER": ""]
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (out, err) = JournaldHarness.readBoth(output, errors)
        process.waitUntilExit()
        return .init(
            status: process.terminationStatus, standardOutput: String(decoding: out, as: UTF8.self),
            standardError: String(decoding: err, as: UTF8.self))
    }

    /// Entries for journalctl options beyond field matches (`-p`, `-t`).
    static func journalctl(_ harness: JournaldHarness, _ arguments: [String]) throws -> [[String: String]] {
        let output = try JournaldHarness.journalctl(["-D", harness.journalDirectory.path, "-o", "json", "--no-pager"] + arguments)
        #expect(output.status == 0, "\(output.standardError)")
        return try output.standardOutput.split(separator: "\n").map(JournaldHarness.decodeEntry)
    }

    static func waitForExit(_ process: ChildProcess, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return !process.isRunning
    }

    /// SIGTERM to the daemon itself rather than to the harness, so the test does not depend
    /// on the harness's forwarding trap (which Foundation's `Process` defeated: it started
    /// bash with SIGTERM blocked; `ChildProcess` clears the mask, and the harness is the
    /// fallback when the command's pid is not known yet).
    static func terminateCommand(of harness: JournaldHarness, _ process: ChildProcess) {
        if let pid = harness.commandPID, pid > 0 {
            kill(pid, SIGTERM)
        } else {
            process.terminate()
        }
    }

    /// Stops the harness (and so the daemon and journald) if a failed check left it running.
    static func stop(_ process: ChildProcess, _ harness: JournaldHarness) {
        guard process.isRunning else { return }
        terminateCommand(of: harness, process)
        if !waitForExit(process, timeout: 15) {
            if let pid = harness.commandPID { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)  // journald gets SIGTERM (pdeathsig)
            _ = waitForExit(process, timeout: 5)
        }
    }
}
