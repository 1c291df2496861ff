import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Privacy
import Systemd
import TelemetryModel
import Testing

@testable import TelemetryServer

/// The exits the second audit read client strings through unredacted (issue 23): stats group
/// keys, `/metrics` labels, a bundle's `timeline.txt` and summary, the incident view, and the
/// journal mirror's `MESSAGE` and fields.
@Suite(.serialized) struct ExitRedactionTests {
    static let upn = "jane.doe@contoso.com"
    static let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqYW5lIn0.c2lnbmF0dXJlLXZhbHVl"

    static let events = [
        #"{"name":"EnrollmentCall","appId":"com.contoso.x","deviceId":"\#(upn)","data":{"operation":"\#(upn)","statusCode":216}}"#,
        #"{"name":"AppLaunch","appId":"com.contoso.x","deviceId":"d1","data":{"managementType":"MDM for \#(upn)"}}"#,
        #"{"name":"IntuneAction","appId":"com.contoso.x","deviceId":"d1","data":{"action":"wipe Bearer \#(jwt)"}}"#,
        #"{"name":"IntuneAction","appId":"com.contoso.x","deviceId":"d1","data":{"action":"PinPrompt"}}"#,
    ]

    static func tokens(_ h: IngestHarness) async throws -> (read: String, pii: String, bundle: String) {
        let (_, read) = try await h.components.tokens.create(name: "r", scopes: [.read, .bundle], apps: [], now: 0)
        let (_, pii) = try await h.components.tokens.create(name: "p", scopes: [.read, .bundle, .pii], apps: [], now: 0)
        return (read, pii, read)
    }

    static func get(_ h: IngestHarness, _ uri: String, token: String) async throws -> String {
        try await h.client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"]) { r in
            #expect(r.status == .ok, "\(uri)")
            return String(buffer: r.body)
        }
    }

    @Test func statsGroupKeysAreShownThroughTheVisibilityRule() async throws {
        try await IngestHarness.run { h in
            #expect(try await h.post("/v1/telemetry", Self.events.joined(separator: "\n")).accepted == 4)
            let t = try await Self.tokens(h)
            let pseudonym = h.components.pseudonymizer.identityPseudonym(Self.upn)
            for stats in ["enrollment", "launches", "actions"] {
                let shown = try await Self.get(h, "/v1/stats/\(stats)?since=-1h", token: t.read)
                #expect(!shown.contains("jane") && !shown.contains(Self.jwt), "\(stats): \(shown)")
                let raw = try await Self.get(h, "/v1/stats/\(stats)?since=-1h", token: t.pii)
                #expect(!raw.contains(Self.jwt), "credentials are masked for pii callers too: \(raw)")
                if stats == "enrollment" {
                    #expect(shown.contains("\"\(pseudonym)\""), "\(shown)")
                    #expect(raw.contains(Self.upn), "\(raw)")
                }
            }
            let actions = try await Self.get(h, "/v1/stats/actions?since=-1h", token: t.pii)
            #expect(actions.contains("PinPrompt") && actions.contains("wipe Bearer token-"), "\(actions)")
        }
    }

    @Test func metricsLabelsComeFromTheSDKVocabularyOnly() async throws {
        try await IngestHarness.run { h in
            #expect(try await h.post("/v1/telemetry", Self.events.joined(separator: "\n")).accepted == 4)
            let text = try await Self.get(h, "/metrics", token: h.adminToken)
            #expect(!text.contains("jane") && !text.contains("eyJ") && !text.contains("wipe"), "\(text)")
            #expect(text.contains(#"mamtelemetry_enrollment_calls_total{operation="other""#))
            #expect(text.contains(#"mamtelemetry_app_launches_total{management_type="other""#))
            #expect(text.contains(#"mamtelemetry_intune_actions_total{action="other",env="prod"} 1"#))
            #expect(text.contains(#"mamtelemetry_intune_actions_total{action="PinPrompt",env="prod"} 1"#))
        }
    }

    @Test func vocabularyLabelsAreBoundedWhateverClientsSend() {
        let operations = LabelVocabulary.operations
        #expect(operations.label("enroll") == "enroll")
        #expect(operations.label("") == "unknown")
        #expect(operations.label("Enroll") == "other" && operations.label("x@y.com") == "other")
    }

    @Test func bundleTimelineSummaryAndIncidentShowClientStringsRedacted() async throws {
        try await IngestHarness.run { h in
            #expect(try await h.post("/v1/telemetry", Self.events.joined(separator: "\n")).accepted == 4)
            let upload =
                #"{"appId":"com.contoso.x","deviceId":"\#(Self.upn)","sessionId":"s \#(Self.upn)","logs":[{"level":"error","message":"failed for \#(Self.upn)","component":"Comp \#(Self.upn)"}]}"#
            let answer = try await h.post("/v1/diagnostics", upload, contentType: "application/json")
            let incident = try #require((answer.json["incident"] as? [String: Any])?["id"] as? String, "\(answer.body)")
            let t = try await Self.tokens(h)
            let view = try await Self.get(h, "/v1/incidents/\(incident)", token: t.read)
            #expect(!view.contains("jane"), "\(view)")
            let archive = try await h.client.execute(
                uri: "/v1/bundles?app=com.contoso.x&since=-1h&format=tar.gz", method: .get, headers: [.authorization: "Bearer \(t.read)"]
            ) { [UInt8](buffer: $0.body) }
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("exit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            try Data(archive).write(to: dir.appendingPathComponent("b.tar.gz"))
            let tar = try Process.run(
                URL(fileURLWithPath: "/usr/bin/tar"), arguments: ["xzf", dir.appendingPathComponent("b.tar.gz").path, "-C", dir.path])
            tar.waitUntilExit()
            for member in ["timeline.txt", "summary.json", "telemetry.ndjson", "logs.ndjson", "manifest.json"] {
                let text = try String(contentsOf: dir.appendingPathComponent(member), encoding: .utf8)
                #expect(!text.contains("jane") && !text.contains(Self.jwt), "\(member): \(text)")
            }
            let timeline = try String(contentsOf: dir.appendingPathComponent("timeline.txt"), encoding: .utf8)
            #expect(timeline.contains(h.components.pseudonymizer.identityPseudonym(Self.upn)), "\(timeline)")
        }
    }

    /// The journal mirror's entries hold what a caller without `pii` sees by default; with
    /// `journal.personalData: include` personal data as sent; credentials masked either way.
    @Test(arguments: [JournalPersonalData.redact, .include])
    func journalEntriesAreRedactedUnlessPersonalDataIsIncluded(mode: JournalPersonalData) throws {
        let pseudonymizer = RedactionKey.pseudonymizer
        let record = DecodedRecord(
            json: [],
            keys: RecordKeys(
                time: 0, appId: "com.contoso.x", deviceId: Self.upn, identity: Self.upn, detail: "MSAL \(Self.upn)", level: .info),
            flags: AppFlags(), eventId: nil, message: "Signed in as \(Self.upn) with Authorization: Bearer\t\(Self.jwt)")
        let visibility = RecordVisibility(piiAllowed: mode == .include, pseudonymizer: pseudonymizer)
        let shown = JournalLogMirror.shown(record, visibility: visibility)
        let entry = JournalEntry.logRecord(keys: shown.keys, message: shown.message, env: .prod, identityHash: shown.identityHash)
        let text = entry.fields.map { "\($0.name)=\(String(decoding: $0.value, as: UTF8.self))" }.joined(separator: "\n")
        #expect(!text.contains(Self.jwt), "\(text)")
        #expect(entry.value(of: "MAM_IDENTITY_HASH") == pseudonymizer.identityPseudonym(Self.upn))
        if mode == .redact {
            #expect(!text.contains("jane"), "\(text)")
            #expect(entry.value(of: "MESSAGE")?.contains(pseudonymizer.identityPseudonym(Self.upn)) == true, "\(text)")
        } else {
            #expect(entry.value(of: "MESSAGE")?.hasPrefix("Signed in as \(Self.upn) with Authorization: Bearer\ttoken-") == true, "\(text)")
        }
        let verbose = DecodedRecord(
            json: [], keys: RecordKeys(time: 0, appId: "a", level: .verbose), flags: AppFlags(), eventId: nil, message: "hello \(Self.upn)")
        let verboseShown = JournalLogMirror.shown(verbose, visibility: visibility).message
        #expect(mode == .include ? verboseShown == "hello \(Self.upn)" : WithheldText.isMarker(verboseShown))
    }

    @Test func personalDataInTheJournalIsAnExplicitKeyWithTheEarlierSpellingStillRead() async throws {
        let base = ["mamtelemetryd"]
        #expect(try await ConfigurationLoader.load(arguments: base, environment: [:]).journalPersonalData == .redact)
        #expect(
            try await ConfigurationLoader.load(arguments: base + ["--journal-personal-data", "include"], environment: [:])
                .journalPersonalData
                == .include)
        #expect(
            try await ConfigurationLoader.load(arguments: base, environment: ["MAMTELEMETRY_JOURNAL_VERBOSE_MESSAGES": "raw"])
                .journalPersonalData
                == .include)
        await #expect(throws: ConfigurationError.self) {
            _ = try await ConfigurationLoader.load(arguments: base + ["--journal-personal-data", "yes"], environment: [:])
        }
    }
}

/// A fixed pseudonym key for tests that need no store.
enum RedactionKey {
    static let pseudonymizer = Pseudonymizer(key: .init(data: [UInt8](repeating: 3, count: 32)))
}
