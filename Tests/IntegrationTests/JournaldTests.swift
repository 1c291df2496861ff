import Foundation
import TestSupport
import Testing

// The daemon's journal end to end, inside the real-journald harness (JournaldHarness.swift):
// mirrored records and their fields, the daemon's own entries and storage events under the
// catalog's MESSAGE_IDs, failed enrollments aggregated per minute, and the harness itself.

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
    static let upn = "Megan.Bowen@Contoso.com"

    @Test func recordsPostedOverHTTPComeBackThroughJournalctl() async throws {
        let harness = try JournaldHarness()
        defer { harness.remove() }
        // Personal data mirrored as sent, so every level's message can be compared here; the
        // default (withheld) is JournalExcerptTests.theMirrorWithholdsVerboseTextByDefault.
        let (d, daemon) = try await harness.launchDaemon(["--journal-personal-data", "include"])
        defer { try? FileManager.default.removeItem(at: d.dataDirectory) }
        defer { harness.stop(daemon) }
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
        harness.terminate(daemon)
        let exited = JournaldHarness.waitForExit(daemon, timeout: 20)
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
        let root = try JournaldHarness.buildCatalogDatabase()
        defer { try? FileManager.default.removeItem(at: root) }
        let database = root.appendingPathComponent("var/lib/systemd/catalog/database")
        let subject = try JournaldHarness.catalogSubject(of: startedID)

        let refused = try JournaldHarness.journalctl(["-D", harness.journalDirectory.path, "--root=\(root.path)", "-x", "--no-pager"])
        #expect(refused.status != 0, "journalctl accepted -D with --root")

        let explained = try harness.explain(database: database, match: "MESSAGE_ID=\(startedID)")
        #expect(explained.status == 0, "\(explained.standardError)")
        #expect(explained.standardOutput.contains("mamtelemetryd started"), "\(explained.standardOutput)")
        #expect(explained.standardOutput.contains(subject), "\(explained.standardOutput)")
        #expect(explained.standardOutput.contains("Defined-By: mamtelemetryd"))
        // Control: without the database, the same command shows no explanation.
        let bare = try harness.explain(database: nil, match: "MESSAGE_ID=\(startedID)")
        #expect(bare.standardOutput.contains("mamtelemetryd started"))
        #expect(!bare.standardOutput.contains(subject))
    }

    /// Entries for journalctl options beyond field matches (`-p`, `-t`).
    static func journalctl(_ harness: JournaldHarness, _ arguments: [String]) throws -> [[String: String]] {
        let output = try JournaldHarness.journalctl(["-D", harness.journalDirectory.path, "-o", "json", "--no-pager"] + arguments)
        #expect(output.status == 0, "\(output.standardError)")
        return try output.standardOutput.split(separator: "\n").map(JournaldHarness.decodeEntry)
    }
}

/// The storage and ingest-refusal events reach a real journal under the `MESSAGE_ID`s the
/// catalog explains, and `journalctl -x` shows that explanation next to them.
@Suite(.serialized, .enabled(if: JournaldHarness.isAvailable, "needs root, unshare and systemd-journald"))
struct JournalCatalogEventsTests {
    /// `DaemonMessageID.storageHighWater` / `.ingestRefused` (this target does not link
    /// `Systemd`; the ids are stable by contract).
    static let highWaterID = "5f615aebe5e24591a3ca4ede4cdc14b9"
    static let ingestRefusedID = "ae757b8f0c53474885405f3173698026"

    @Test func highWaterAndRefusalsAreLoggedOnceAndExplainedByTheCatalog() async throws {
        let harness = try JournaldHarness()
        defer { harness.remove() }
        // A high-water mark no disk meets: the daemon starts refusing ingest at once.
        // `/readyz` is 503 while the disk is past its mark.
        let (d, daemon) = try await harness.launchDaemon(
            ["--disk-min-free-bytes", "\(1 << 60)", "--disk-keep-free-bytes", "0"], readyPath: "/healthz")
        defer { try? FileManager.default.removeItem(at: d.dataDirectory) }
        defer { harness.stop(daemon) }

        // A storm of refusals makes one journal line, not one per request.
        for _ in 0..<20 {
            #expect(try await d.post("/v1/telemetry", body: Array(#"{"name":"AppLaunch","appId":"com.x"}"#.utf8)).0 == 507)
        }
        let highWater = try await harness.waitForEntries(["MESSAGE_ID=\(Self.highWaterID)"])
        #expect(highWater.count == 1)
        #expect(highWater.first?["PRIORITY"] == "3")
        #expect(highWater.first?["MAM_DATADIR"] == d.dataDirectory.path)
        let refused = try await harness.waitForEntries(["MESSAGE_ID=\(Self.ingestRefusedID)"])
        try await Task.sleep(for: .milliseconds(500))
        #expect(try harness.entries(["MESSAGE_ID=\(Self.ingestRefusedID)"]).count == 1, "a refusal storm flooded the journal")
        #expect(refused.first?["MAM_REASON"] == "storage_full")
        #expect(refused.first?["MAM_STATUS"] == "507")

        let root = try JournaldHarness.buildCatalogDatabase()
        defer { try? FileManager.default.removeItem(at: root) }
        let database = root.appendingPathComponent("var/lib/systemd/catalog/database")
        for id in [Self.highWaterID, Self.ingestRefusedID] {
            let explained = try harness.explain(database: database, match: "MESSAGE_ID=\(id)")
            #expect(explained.status == 0, "\(explained.standardError)")
            let subject = try JournaldHarness.catalogSubject(of: id)
            #expect(
                explained.standardOutput.contains(subject), "journalctl -x shows no explanation for \(id):\n\(explained.standardOutput)")
        }
        harness.terminate(daemon)
        #expect(JournaldHarness.waitForExit(daemon, timeout: 15))
    }
}

/// Failed enrollment calls in the real journal (issue 24): the built daemon inside the
/// journald harness writes one entry per app, status code and minute — not one per event —
/// with the code's MESSAGE_ID, so `journalctl -x MAM_APP_ID=…` explains each failure with the
/// shipped catalog. The aggregation itself is checked in process (TelemetryServerTests).
@Suite(.serialized, .enabled(if: JournaldHarness.isAvailable, "needs root, unshare and systemd-journald"))
struct EnrollmentFailureJournalIntegrationTests {
    /// `EnrollmentFailureMessageID` of 200 and 225 (this target does not link `Systemd`).
    static let accountNotLicensedID = "98b4e757220d470bbf6251f248700200"
    static let licensedNotTargetedID = "98b4e757220d470bbf6251f248700225"

    @Test func journalctlExplainsFailedEnrollmentsInPlace() async throws {
        let harness = try JournaldHarness()
        defer { harness.remove() }
        let (d, daemon) = try await harness.launchDaemon()
        defer { try? FileManager.default.removeItem(at: d.dataDirectory) }
        defer { harness.stop(daemon) }

        let app = "com.contoso.journal-\(UUID().uuidString.prefix(8).lowercased())"
        var lines: [String] = []
        for i in 0..<60 {
            lines.append(
                #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"dev-\#(i % 7)","data":{"operation":"enroll","statusCode":200,"didSucceed":false}}"#
            )
        }
        for i in 0..<4 {
            lines.append(
                #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"dev-t\#(i)","data":{"operation":"enroll","statusCode":225}}"#)
            lines.append(
                #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"dev-ok\#(i)","data":{"operation":"enroll","statusCode":100}}"#)
        }
        // One request: one receive time, so one minute.
        let (status, answer, _) = try await d.post("/v1/telemetry", body: Array(lines.joined(separator: "\n").utf8))
        #expect(status == 200, "\(String(decoding: answer, as: UTF8.self))")

        // A graceful stop sends the minute still open.
        harness.terminate(daemon)
        #expect(JournaldHarness.waitForExit(daemon, timeout: 20), "harness did not exit")

        let entries = try harness.entries(["MAM_APP_ID=\(app)"])
        #expect(entries.count == 2, "one entry per code, not one per call: \(entries.map { $0["MESSAGE"] ?? "" })")
        let notLicensed = try #require(entries.first { $0["MAM_STATUS_CODE"] == "200" })
        #expect(notLicensed["MESSAGE_ID"] == Self.accountNotLicensedID)
        #expect(notLicensed["MAM_FAILED_CALLS"] == "60")
        #expect(notLicensed["MAM_STATUS_NAME"] == "AccountNotLicensed")
        #expect(notLicensed["PRIORITY"] == "4")
        #expect(notLicensed["MAM_DEVICE_ID"]?.split(separator: "\n").count == 3, "\(notLicensed)")
        let notTargeted = try #require(entries.first { $0["MAM_STATUS_CODE"] == "225" })
        #expect(notTargeted["MESSAGE_ID"] == Self.licensedNotTargetedID)
        #expect(notTargeted["MAM_FAILED_CALLS"] == "4")

        let root = try JournaldHarness.buildCatalogDatabase()
        defer { try? FileManager.default.removeItem(at: root) }
        let explained = try harness.explain(
            database: root.appendingPathComponent("var/lib/systemd/catalog/database"), match: "MAM_APP_ID=\(app)")
        #expect(explained.status == 0, "\(explained.standardError)")
        let text = explained.standardOutput
        #expect(text.contains("Enrollment failed with AccountNotLicensed (200)"), "\(text)")
        #expect(text.contains("Assign an Intune license to the user"), "\(text)")
        #expect(text.contains("60 enrollment calls of \(app) (prod) failed"), "fields substituted: \(text)")
        #expect(text.contains("Enrollment failed with LicensedNotTargeted (225)"), "\(text)")
        #expect(text.contains("Assign an app protection policy covering this app"), "\(text)")
    }
}

@Suite("journald harness self-check", .enabled(if: JournaldHarness.isAvailable, "needs root and systemd-journald"))
struct JournaldHarnessTests {
    @Test("a line logged under the harness is read back with journalctl -D, and the host is untouched")
    func selfCheck() async throws {
        let hostSocketBefore = FileManager.default.fileExists(atPath: "/run/systemd/journal/socket")
        let harness = try JournaldHarness()
        defer { harness.remove() }

        let result = try harness.run("/usr/bin/systemd-cat", ["-t", "harness-selftest", "echo", "hello"])
        #expect(result.status == 0, "\(result.standardError)")

        let entries = try harness.entries(["SYSLOG_IDENTIFIER=harness-selftest"])
        #expect(entries.count == 1)
        #expect(entries.first?["MESSAGE"] == "hello")
        #expect(entries.first?["_TRANSPORT"] == "stdout")
        // The private /run/systemd was a mount inside the namespace only.
        #expect(FileManager.default.fileExists(atPath: "/run/systemd/journal/socket") == hostSocketBefore)
    }

    @Test("the command's exit status is the harness's")
    func exitStatus() throws {
        let harness = try JournaldHarness()
        defer { harness.remove() }
        #expect(try harness.run("/bin/sh", ["-c", "exit 7"]).status == 7)
    }
}
