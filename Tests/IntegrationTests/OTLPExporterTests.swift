import Foundation
import TestSupport
import Testing

/// OpenTelemetry interoperability end to end: the real OpenTelemetry Python SDK
/// (`otlp-emit.py`, installed by `scripts/otel-venv.sh`), configured by environment alone,
/// exports logs and events through its batch processor to the built daemon, once with its
/// own OTLP/HTTP protobuf exporter and once as OTLP/HTTP JSON. The daemon runs next to a real
/// journald; the records come back from `/v1/logs` and `/v1/events` with the mapped fields,
/// the log records are in the journal, and an opted-out app's marker is nowhere on disk.
@Suite(.serialized, .enabled(if: JournaldHarness.isAvailable, "needs root, unshare and systemd-journald"))
struct OTLPExporterTests {
    static let upn = "Megan.Bowen@Contoso.com"
    static let emitter = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("otlp-emit.py")

    @Test func openTelemetrySDKExportsToTheDaemonByConfigurationAlone() async throws {
        let python = try Self.installSDK()
        let harness = try JournaldHarness()
        defer { harness.remove() }
        let (d, daemon) = try await harness.launchDaemon()
        defer { try? FileManager.default.removeItem(at: d.dataDirectory) }
        defer { harness.stop(daemon) }

        // The registry opts one app out; the exporter holds an ingest token bound to its apps.
        let optedOutApp = "com.contoso.optout"
        #expect(try await d.post("/v1/apps/\(optedOutApp)", body: Array(#"{"telemetryDisabled":true}"#.utf8), method: .PUT).0 == 200)
        let (created, tokenAnswer, _) = try await d.post(
            "/v1/tokens", body: Array(#"{"name":"otel-collector","scopes":["ingest"],"apps":["com.contoso.mail","\#(optedOutApp)"]}"#.utf8))
        #expect(created == 201)
        let token = try #require(parseJSON(tokenAnswer)["token"] as? String)

        let tag = UUID().uuidString.prefix(8).lowercased()
        for encoding in ["protobuf", "json"] {
            let device = "otlp-\(encoding)-\(tag)"
            let environment = [
                "OTEL_EXPORTER_OTLP_ENDPOINT": d.baseURL,
                // The W3C-baggage form (%20) and the plain space both work with the SDKs.
                "OTEL_EXPORTER_OTLP_HEADERS": encoding == "json" ? "Authorization=Bearer%20\(token)" : "Authorization=Bearer \(token)",
                "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
                "OTEL_SERVICE_NAME": "com.contoso.mail",
                "OTEL_RESOURCE_ATTRIBUTES": "device.id=\(device),service.version=4.2411.0,enduser.id=\(Self.upn)",
                // No timed export: each provider exports once, at shutdown, however slowly a
                // loaded machine runs the script (a 200 ms delay split the app's batch in two).
                "OTEL_BLRP_SCHEDULE_DELAY": "600000",
            ]
            let run = try Self.emit(python, encoding: encoding, tag: String(tag), optedOutApp: optedOutApp, environment: environment)
            #expect(run.status == 0, "otlp-emit.py \(encoding): \(run.standardOutput) \(run.standardError)")
            let report = parseJSON(Array(run.standardOutput.utf8))
            let exports = report["exports"] as? [[String: Any]] ?? []
            #expect(exports.map { $0["ok"] as? Bool } == [true, true], "\(report)")
            #expect(exports.compactMap { $0["records"] as? Int }.reduce(0, +) == 10, "\(report)")
            let traceId = try #require(report["traceId"] as? String)
            if encoding == "json" {
                let answers = report["answers"] as? [[String: Any]] ?? []
                #expect(answers.allSatisfy { $0["status"] as? Int == 200 }, "\(answers)")
                #expect((answers.first?["body"] as? String)?.contains("dropped: the app opted out of telemetry") == true, "\(answers)")
            }

            // Log records: prod ones in order, with every mapped field.
            let logs = try await d.json("/v1/logs?device=\(device)&order=asc&limit=100")["logs"] as? [[String: Any]] ?? []
            let levels = ["verbose", "info", "warning", "error"]
            #expect(logs.map { $0["message"] as? String } == levels.map { "\(encoding) \($0) \(tag)" })
            #expect(logs.map { $0["level"] as? String } == levels)
            for record in logs {
                #expect(record["appId"] as? String == "com.contoso.mail")
                #expect(record["appVersion"] as? String == "4.2411.0")
                #expect(record["sessionId"] as? String == "sess-\(tag)")
                #expect(record["identity"] as? String == Self.upn)  // the admin reader holds pii
                #expect(record["component"] as? String == "Enrollment")
                #expect(record["code.function.name"] as? String == "main")
                #expect((record["resource"] as? [String: Any])?["telemetry.sdk.language"] as? String == "python")
            }
            #expect(logs.count == 4 && logs[1]["attempt"] as? Int == 2)
            #expect(logs.last?["traceId"] as? String == traceId)
            let ppe = try await d.json("/v1/logs?env=ppe&device=\(device)&limit=100")["logs"] as? [[String: Any]] ?? []
            #expect(ppe.map { $0["message"] as? String } == ["\(encoding) PPE-\(tag)"])

            // Telemetry events, found by the case-insensitive identity like native ones.
            let events =
                try await d.json("/v1/events?device=\(device)&identity=megan.bowen@contoso.com&order=asc")["events"] as? [[String: Any]]
                ?? []
            #expect(events.map { $0["name"] as? String } == ["EnrollmentCall", "AppLaunch"])
            let call = events.first ?? [:]
            #expect(call["statusName"] as? String == "AccountNotLicensed")
            #expect(call["eventId"] as? String == "\(encoding)-enroll-\(tag)")
            let data = call["data"] as? [String: Any] ?? [:]
            #expect(data["operation"] as? String == "enroll" && data["statusCode"] as? Int == 200 && data["durationMs"] as? Int == 812)
            #expect((events.last?["data"] as? [String: Any])?["managementType"] as? String == "MAM-WE")

            // The journal mirror: the four prod records and the PPE one, nothing else.
            let entries = try await harness.waitForEntries(["MAM_DEVICE_ID=\(device)"], count: 5)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try harness.entries(["MAM_DEVICE_ID=\(device)"]).count == 5)
            let priorities = ["verbose": "7", "info": "6", "warning": "4", "error": "3"]
            for level in levels {
                // Verbose text is withheld from the journal by default (journal.personalData).
                let entry = try #require(
                    level == "verbose"
                        ? entries.first { $0["MAM_LEVEL"] == "verbose" && $0["MAM_ENV"] == "prod" }
                        : entries.first { $0["MESSAGE"] == "\(encoding) \(level) \(tag)" }, "\(entries)")
                if level == "verbose" { #expect(entry["MESSAGE"]?.hasPrefix("[withheld") == true, "\(entry)") }
                #expect(entry["PRIORITY"] == priorities[level])
                #expect(entry["MAM_LEVEL"] == level)
                #expect(entry["MAM_APP_ID"] == "com.contoso.mail")
                #expect(entry["MAM_SESSION_ID"] == "sess-\(tag)")
                #expect(entry["MAM_COMPONENT"] == "Enrollment")
                #expect(entry["MAM_ENV"] == "prod")
                #expect(entry["MAM_IDENTITY_HASH"]?.isEmpty == false)
            }
            #expect(entries.first { $0["MESSAGE"] == "\(encoding) PPE-\(tag)" }?["MAM_ENV"] == "ppe")
        }

        // Nothing of the opted-out records anywhere: not in the store (raw files and every
        // inflated blob), not in the journal. The PPE marker, mirrored, is the positive control.
        #expect((try await d.json("/v1/logs?contains=OPTOUT&limit=10")["logs"] as? [Any])?.isEmpty == true)
        harness.terminate(daemon)
        #expect(JournaldHarness.waitForExit(daemon, timeout: 20))
        let marker = "OPTOUT-\(tag)"
        let files = FileManager.default.enumerator(at: d.dataDirectory, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
        for file in files where !file.hasDirectoryPath {
            #expect(try Data(contentsOf: file).range(of: Data(marker.utf8)) == nil, "\(file.lastPathComponent) holds opted-out data")
        }
        // After the raw pass: opening a store with SQLite removes its -shm file.
        var inflated = 0
        for file in files where file.pathExtension == "sqlite" {
            inflated += try StoreFileScan.inflateEveryBlob(in: file, marker: marker, ppeMarker: "PPE-\(tag)")
        }
        // Not on ClickHouse: there the files are the spool, which deletes each batch once
        // ClickHouse holds it (PrivacyFlagsIntegrationTests searches ClickHouse itself).
        if !d.backend.isClickHouse { #expect(inflated >= 4) }
        var controlSeen = false
        let journalFiles =
            FileManager.default.enumerator(at: harness.journalDirectory, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? []
        for file in journalFiles where file.pathExtension == "journal" {
            let raw = try Data(contentsOf: file)
            #expect(raw.range(of: Data(marker.utf8)) == nil, "opted-out data in \(file.lastPathComponent)")
            #expect(raw.range(of: Data(Self.upn.utf8)) == nil, "a raw UPN in \(file.lastPathComponent)")
            if raw.range(of: Data("PPE-\(tag)".utf8)) != nil { controlSeen = true }
        }
        #expect(controlSeen, "the mirrored PPE records were not found in the raw journal files")
    }

    /// The venv's python with the pinned SDK (`scripts/otel-venv.sh` installs it once).
    static func installSDK() throws -> String {
        let script = DaemonProcess.packageRoot.appendingPathComponent("scripts/otel-venv.sh")
        let output = try JournaldHarness.capture("/bin/bash", [script.path], environment: ProcessInfo.processInfo.environment, timeout: 600)
        guard output.status == 0, let python = output.standardOutput.split(separator: "\n").last.map(String.init) else {
            throw SetupError.sdk("scripts/otel-venv.sh failed (\(output.status)): \(output.standardError)")
        }
        return python
    }

    static func emit(
        _ python: String, encoding: String, tag: String, optedOutApp: String, environment: [String: String]
    ) throws -> JournaldHarness.Output {
        // Only what an operator would set: no OTEL_* from the test runner's own environment.
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OTEL_") }
        env.merge(environment) { $1 }
        return try JournaldHarness.capture(
            python, [emitter.path, "--encoding", encoding, "--tag", tag, "--opted-out-app", optedOutApp], environment: env, timeout: 120)
    }

    enum SetupError: Error { case sdk(String) }
}
