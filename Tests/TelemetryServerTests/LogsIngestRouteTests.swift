import Compression
import Foundation
import HTTPTypes
import Testing

@testable import TelemetryServer

/// `POST /v1/logs` on the daemon's router over a real store (issue 3, SPEC §2.4, §3): console-export text,
/// NDJSON with per-line errors, compressed bodies, request-level defaults, the `level`
/// minimum filter, PPE routing and the `MAMTelemetryDisabled` opt-out — which stops
/// automatic logs but never a diagnostic upload the user chose to send.
@Suite(.serialized) struct LogsIngestRouteTests {
    /// A diagnostic-console export as the SDK versions in the field write it: ISO 8601 with
    /// `T` and `Z`, a space-separated local-style stamp, Apple's unified-log format with a
    /// `+0000` zone and a process marker, an offset zone, Windows line endings, blank lines,
    /// a banner before the first entry, and continuation lines (a stack frame, a level without
    /// a timestamp) that belong to the entry above them.
    static let consoleExport = [
        "=== Intune MAM diagnostic console export (Contoso Mail 4.2.1) ===",
        "2026-11-21T10:15:30.123Z [WARNING] [PolicyManager] Policy check-in failed, retrying in 30s",
        "2026-11-21 10:15:31.456 INFO IntuneMAM: enrollment started\r",
        "",
        "2026-11-21 10:15:32.789012+0000 ContosoMail[412:9921] <Error> [Enrollment] token expired",
        "2026-11-21T11:15:33.000+01:00 verbose [Auth] acquiring token silently",
        "    at ContosoMail.AppDelegate.application(_:didFinishLaunchingWithOptions:) + 212",
        "[ERROR] no timestamp, so this continues the entry above",
        "2026-11-21T10:15:34Z Debug: policy cache refreshed",
    ].joined(separator: "\n")

    @Test func consoleExportIsParsedAndContinuationLinesJoinTheirEntry() async throws {
        try await IngestHarness.run { d in
            let device = "text-\(UUID().uuidString)"
            let (status, answer) = try await d.ingestLogs(
                Self.consoleExport, query: "?app=com.contoso.mail&device=\(device)&session=s-1", contentType: "text/plain; charset=utf-8")
            #expect(status == 200, "\(answer)")
            #expect(answer["accepted"] as? Int == 6)
            #expect((answer["rejected"] as? [Any])?.isEmpty == true)

            let records = try await d.logRecords("device=\(device)")
            try #require(records.count == 6, "\(records)")
            let received = try #require(records.first?["receivedAt"] as? String)
            let expected: [(time: String?, level: String, component: String?, message: String)] = [
                (nil, "info", nil, "=== Intune MAM diagnostic console export (Contoso Mail 4.2.1) ==="),
                ("2026-11-21T10:15:30.123Z", "warning", "PolicyManager", "Policy check-in failed, retrying in 30s"),
                ("2026-11-21T10:15:31.456Z", "info", "IntuneMAM", "enrollment started"),
                ("2026-11-21T10:15:32.789Z", "error", "Enrollment", "token expired"),
                (
                    "2026-11-21T10:15:33.000Z", "verbose", "Auth",
                    "acquiring token silently\n    at ContosoMail.AppDelegate.application(_:didFinishLaunchingWithOptions:) + 212"
                        + "\n[ERROR] no timestamp, so this continues the entry above"
                ),
                ("2026-11-21T10:15:34.000Z", "verbose", nil, "policy cache refreshed"),
            ]
            // Matched by message, not position: the store numbers a request's verbose records
            // after its other records (EnvironmentDatabase.swift), so `order=asc` is not line order.
            for want in expected {
                let record = try #require(records.first { $0["message"] as? String == want.message }, "\(want.message) missing")
                #expect(record["level"] as? String == want.level, "\(record)")
                #expect(record["component"] as? String == want.component, "\(record)")
                // Text before the first entry has no time of its own: it is stamped with the time it arrived.
                #expect(record["time"] as? String == (want.time ?? received), "\(record)")
                #expect(record["appId"] as? String == "com.contoso.mail")
                #expect(record["sessionId"] as? String == "s-1")
            }
        }
    }

    @Test func ndjsonReportsEachBadLineAndKeepsTheRest() async throws {
        try await IngestHarness.run { d in
            let device = "nd-\(UUID().uuidString)"
            let lines = [
                #"{"time":"2026-11-21T10:00:00.000Z","level":"info","message":"first","appId":"com.a","deviceId":"\#(device)","component":"Launch"}"#,
                #"{"level":"info","message":"broken""#,
                #"{"level":"info","appId":"com.a","deviceId":"\#(device)"}"#,
                #"{"level":"loud","message":"bad level","appId":"com.a","deviceId":"\#(device)"}"#,
                #"{"id":7,"message":"reserved field","appId":"com.a","deviceId":"\#(device)"}"#,
                #"{"message":"no app anywhere","deviceId":"\#(device)"}"#,
                #"{"time":"2026-11-21T10:00:01.000Z","level":"error","message":"last","appId":"com.a","deviceId":"\#(device)","category":"Net","extra":{"code":42}}"#,
            ]
            let (status, answer) = try await d.ingestLogs(lines.joined(separator: "\n"))
            #expect(status == 200, "\(answer)")
            #expect(answer["accepted"] as? Int == 2)
            let rejected = try #require(answer["rejected"] as? [[String: Any]])
            #expect(rejected.compactMap { $0["line"] as? Int } == [2, 3, 4, 5, 6])
            let reasons = rejected.compactMap { $0["error"] as? String }
            #expect(reasons.count == 5)
            #expect(reasons[1].contains("message"), "\(reasons)")
            #expect(reasons[2].contains("loud"), "\(reasons)")
            #expect(reasons[3].contains("reserved"), "\(reasons)")
            #expect(reasons[4].contains("appId"), "\(reasons)")

            let records = try await d.logRecords("device=\(device)")
            #expect(records.compactMap { $0["message"] as? String } == ["first", "last"])
            #expect(records.last?["component"] == nil && records.last?["category"] as? String == "Net")
            #expect((records.last?["extra"] as? [String: Any])?["code"] as? Int == 42)

            // Nothing usable at all: the request is refused, nothing stored.
            let (allBad, _) = try await d.ingestLogs(#"{"level":"info""#)
            #expect(allBad == 400)
        }
    }

    @Test func compressedBodiesAreAccepted() async throws {
        try await IngestHarness.run { d in
            let device = "zip-\(UUID().uuidString)"
            var expected: [String] = []
            for (encoding, format) in [("gzip", ZlibFormat.gzip), ("deflate", .zlib), ("deflate", .raw)] {
                let tag = "\(encoding)-\(format)"
                let ndjson = #"{"level":"warning","message":"nd \#(tag)","appId":"com.a","deviceId":"\#(device)"}"#
                let (s1, a1) = try await d.ingestLogs(
                    bytes: try Deflate.compress(Array(ndjson.utf8), format: format), query: "",
                    contentType: "application/x-ndjson", headers: [("Content-Encoding", encoding)])
                #expect(s1 == 200 && a1["accepted"] as? Int == 1, "\(tag): \(a1)")
                let text = "2026-11-21T10:15:30.123Z [ERROR] [Zip] text \(tag)\nraw \(tag)"
                let (s2, a2) = try await d.ingestLogs(
                    bytes: try Deflate.compress(Array(text.utf8), format: format), query: "?app=com.a&device=\(device)",
                    contentType: "text/plain", headers: [("Content-Encoding", encoding)])
                #expect(s2 == 200 && a2["accepted"] as? Int == 1, "\(tag): \(a2)")
                expected += ["nd \(tag)", "text \(tag)\nraw \(tag)"]
            }
            #expect(try await d.logRecords("device=\(device)").compactMap { $0["message"] as? String } == expected)
        }
    }

    @Test func defaultsComeFromQueryOrHeadersAndRecordsWin() async throws {
        try await IngestHarness.run { d in
            let device = "hdr-\(UUID().uuidString)"
            let headers = [("X-MAM-App-Id", "com.header.app"), ("X-MAM-Device-Id", device), ("X-MAM-Session-Id", "hs")]
            // Headers only.
            let (s1, _) = try await d.ingestLogs("from headers", contentType: "text/plain", headers: headers)
            #expect(s1 == 200)
            // Query beats headers.
            let (s2, _) = try await d.ingestLogs(
                "from query", query: "?app=com.query.app&device=\(device)", contentType: "text/plain", headers: headers)
            #expect(s2 == 200)
            // NDJSON: the record's own fields beat the request's defaults; missing ones are filled.
            let ndjson = [
                #"{"message":"own app","appId":"com.own.app"}"#,
                #"{"message":"default app"}"#,
            ].joined(separator: "\n")
            let (s3, a3) = try await d.ingestLogs(ndjson, query: "?app=com.query.app&device=\(device)")
            #expect(s3 == 200 && a3["accepted"] as? Int == 2)

            let records = try await d.logRecords("device=\(device)")
            let byMessage = Dictionary(uniqueKeysWithValues: records.map { ($0["message"] as? String ?? "", $0) })
            #expect(byMessage["from headers"]?["appId"] as? String == "com.header.app")
            #expect(byMessage["from headers"]?["sessionId"] as? String == "hs")
            #expect(byMessage["from query"]?["appId"] as? String == "com.query.app")
            #expect(byMessage["own app"]?["appId"] as? String == "com.own.app")
            #expect(byMessage["default app"]?["appId"] as? String == "com.query.app")
            #expect(byMessage["default app"]?["deviceId"] as? String == device)
            #expect(try await d.logRecords("app=com.query.app&device=\(device)").count == 2)

            // Text without an app id anywhere: 400 telling the caller how to pass it.
            let (s4, a4) = try await d.ingestLogs("orphan line", query: "?device=\(device)", contentType: "text/plain")
            #expect(s4 == 400)
            #expect(((a4["error"] as? [String: Any])?["message"] as? String)?.contains("?app=") == true, "\(a4)")
        }
    }

    @Test func levelFilterIsAMinimum() async throws {
        try await IngestHarness.run { (d: IngestHarness) async throws in
            let device = "lvl-\(UUID().uuidString)"
            let levels = ["verbose", "info", "warning", "error"]
            let body = levels.map { #"{"level":"\#($0)","message":"m-\#($0)","appId":"com.a","deviceId":"\#(device)"}"# }
            #expect(try await d.ingestLogs(body.joined(separator: "\n")).0 == 200)
            func messages(_ level: String) async throws -> Set<String> {
                Set(try await d.logRecords("device=\(device)&level=\(level)").compactMap { $0["message"] as? String })
            }
            #expect(try await messages("verbose") == ["m-verbose", "m-info", "m-warning", "m-error"])
            #expect(try await messages("info") == ["m-info", "m-warning", "m-error"])
            #expect(try await messages("warning") == ["m-warning", "m-error"])
            #expect(try await messages("WARN") == ["m-warning", "m-error"])
            #expect(try await messages("error") == ["m-error"])
            #expect(try await d.send("/v1/logs?level=loud", method: .get).status == 400)
        }
    }

    @Test func ppeRoutingAppliesToLogs() async throws {
        try await IngestHarness.run { d in
            let device = "ppe-\(UUID().uuidString)"
            #expect(try await d.send("/v1/apps/com.registry.ppe", method: .put, body: #"{"usePPE":true}"#).status == 200)
            let ndjson = [
                #"{"message":"ppe by settings","appId":"com.a","deviceId":"\#(device)","settings":{"MAMTelemetryUsePPE":true}}"#,
                #"{"message":"prod","appId":"com.a","deviceId":"\#(device)"}"#,
            ].joined(separator: "\n")
            let (s1, a1) = try await d.ingestLogs(ndjson)
            #expect(s1 == 200)
            #expect(a1["env"] as? [String: Int] == ["prod": 1, "ppe": 1])
            let (s2, a2) = try await d.ingestLogs(
                "ppe by registry", query: "?app=com.registry.ppe&device=\(device)", contentType: "text/plain")
            #expect(s2 == 200)
            #expect(a2["env"] as? [String: Int] == ["prod": 0, "ppe": 1])

            #expect(try await d.logRecords("device=\(device)").compactMap { $0["message"] as? String } == ["prod"])
            let ppe = try await d.logRecords("env=ppe&device=\(device)")
            #expect(ppe.compactMap { $0["message"] as? String } == ["ppe by settings", "ppe by registry"])
            #expect(ppe.allSatisfy { $0["env"] as? String == "ppe" })
        }
    }

    @Test func telemetryDisabledDropsAutomaticLogsButNotADiagnosticUpload() async throws {
        try await IngestHarness.run { d in
            let device = "off-\(UUID().uuidString)"
            #expect(try await d.send("/v1/apps/com.registry.off", method: .put, body: #"{"telemetryDisabled":true}"#).status == 200)

            let ndjson = [
                #"{"message":"opted out","appId":"com.a","deviceId":"\#(device)","settings":{"MAMTelemetryDisabled":true}}"#,
                #"{"message":"kept","appId":"com.a","deviceId":"\#(device)"}"#,
            ].joined(separator: "\n")
            let (s1, a1) = try await d.ingestLogs(ndjson)
            #expect(s1 == 200)
            #expect(a1["accepted"] as? Int == 1)
            #expect((a1["dropped"] as? [String: Int])?["telemetryDisabled"] == 1)
            let (s2, a2, h2) = try await d.send(
                "/v1/logs?app=com.registry.off&device=\(device)", method: .post, body: "registry opted out\nsecond line",
                headers: [("Content-Type", "text/plain")])
            #expect(s2 == 200)
            #expect((a2["dropped"] as? [String: Int])?["telemetryDisabled"] == 2)
            #expect(h2[HTTPField.Name("Kill-Tokens")!] == "com.registry.off")
            #expect(try await d.logRecords("device=\(device)").compactMap { $0["message"] as? String } == ["kept"])

            // The user chose to share: accepted despite the opt-out, in both environments.
            let (s3, a3) = try await d.diagnose([
                "appId": "com.registry.off", "deviceId": device, "description": "cannot open attachments",
                "settings": ["MAMTelemetryDisabled": true],
                "logs": [["level": "error", "message": "shared prod"]],
            ])
            #expect(s3 == 201, "\(a3)")
            #expect(a3["env"] as? [String: Int] == ["prod": 1, "ppe": 0])
            let prodIncident = try #require((a3["incident"] as? [String: Any])?["id"] as? String)
            let (s4, a4) = try await d.diagnose([
                "appId": "com.a", "deviceId": device,
                "settings": ["MAMTelemetryDisabled": true, "MAMTelemetryUsePPE": true],
                "logs": [["level": "warning", "message": "shared ppe"]], "text": "console line",
            ])
            #expect(s4 == 201, "\(a4)")
            #expect(a4["env"] as? [String: Int] == ["prod": 0, "ppe": 2])
            let ppeIncident = try #require((a4["incident"] as? [String: Any])?["id"] as? String)

            #expect(try await d.logRecords("device=\(device)").compactMap { $0["message"] as? String } == ["kept", "shared prod"])
            #expect(try await d.logRecords("device=\(device)&incident=\(prodIncident)").count == 1)
            let ppe = try await d.logRecords("env=ppe&device=\(device)")
            #expect(ppe.compactMap { $0["message"] as? String } == ["shared ppe", "console line"])
            #expect(ppe.allSatisfy { $0["incident"] as? String == ppeIncident })
            #expect(try await d.get("/v1/incidents/\(ppeIncident)")["env"] as? String == "ppe")
        }
    }
}
