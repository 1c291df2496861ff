import Foundation
import TestSupport
import Testing

/// The support engineer's CLI against the built daemon (issue 24): following like
/// `journalctl -f` (last N, then arrivals, late ones marked), a user's logs including their
/// device's, forgiving device ids, explanations, the incident list and the story bundle. The
/// README's walk-through runs too (ReadmeExampleTests); this checks what it cannot.
@Suite(.serialized) struct SupportFlowTests {
    static let app = "com.contoso.support"
    static let device = "4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B"

    static func log(_ message: String, minutesAgo: Double = 0, level: String = "info", identity: String? = nil) -> String {
        let time = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-minutesAgo * 60))
        var object: [String: Any] = ["appId": app, "deviceId": device, "level": level, "message": message, "time": time]
        if let identity { object["identity"] = identity }
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func followStartsWithTheLastLinesAndMarksLateArrivals() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let backlog = (0..<5).map { Self.log("backlog \($0)", minutesAgo: 1 - Double($0) / 10) }
        #expect(try await d.ingestLogs(backlog.joined(separator: "\n")).0 == 200)
        // A typed prefix in lower case, and a window that the late record is far outside of.
        let ctl = try ControlProcess(["logs", "--device", "4f0e2a1b", "--since", "-5m", "-f", "-n", "2"], daemon: d)
        defer {
            if ctl.process.isRunning {
                kill(ctl.process.processIdentifier, SIGKILL)
                ctl.process.waitUntilExit()
            }
        }
        #expect(try await ctl.waitForOutput(containing: "backlog 4"), "\(ctl.standardOutput) \(ctl.standardError)")
        #expect(ctl.standardOutput.split(separator: "\n").count == 2 && ctl.standardOutput.contains("backlog 3"), "\(ctl.standardOutput)")
        #expect(ctl.standardError.contains("following device \(Self.device) (matched '4f0e2a1b')"), "\(ctl.standardError)")
        // The stream subscribes after its backlog: send until it shows what arrives.
        var sent = 0
        while !ctl.standardOutput.contains("uploaded late"), sent < 20 {
            #expect(try await d.ingestLogs(Self.log("uploaded late", minutesAgo: 20, level: "error")).0 == 200)
            sent += 1
            _ = try await ctl.waitForOutput(containing: "uploaded late", timeout: .seconds(1))
        }
        let late = try #require(ctl.standardOutput.split(separator: "\n").first { $0.contains("uploaded late") })
        #expect(late.hasSuffix("[arrived 20 min late]"), "\(late)")
        #expect(!ctl.standardOutput.contains("backlog 0"))
        kill(ctl.process.processIdentifier, SIGTERM)
        _ = try await ctl.waitForExit(timeout: .seconds(5))
    }

    @Test func theUsersStoryExplanationsAndForgivingIDs() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let events = [
            #"{"name":"AppLaunch","appId":"\#(Self.app)","deviceId":"\#(Self.device)","identity":"Jane@Contoso.com"}"#,
            #"{"name":"EnrollmentCall","appId":"\#(Self.app)","deviceId":"\#(Self.device)","data":{"operation":"enroll","statusCode":225}}"#,
        ]
        #expect(try await d.post("/v1/telemetry", body: Array(events.joined(separator: "\n").utf8)).0 == 200)
        #expect(try await d.ingestLogs(Self.log("no app protection policy for this user", level: "error")).0 == 200)
        let created = try await d.post(
            "/v1/tokens", body: Array(#"{"name":"engineer","scopes":["read","bundle"]}"#.utf8),
            headers: [("Content-Type", "application/json")])
        let token = try #require(parseJSON(created.1)["token"] as? String)

        // By UPN: a token with the pii scope (the admin's); without it the user is a pseudonym.
        let logs = try await ControlProcess.run(["logs", "--identity", "jane@contoso.com", "--since", "-1h"], daemon: d)
        #expect(logs.status == 0, "\(logs.errors)")
        #expect(logs.output.contains("no app protection policy for this user"), "the device's log is in the user's view: \(logs.output)")
        #expect(logs.output.contains("with the records of the devices they used: \(Self.device)"), "\(logs.output)")
        let own = try await ControlProcess.run(["logs", "--identity", "jane@contoso.com", "--no-devices"], daemon: d)
        #expect(own.status == 0 && !own.output.contains("no app protection policy"), "\(own.output)")
        // Without pii, by the pseudonym the engineer is shown: the same story, the UPN never shown.
        let pseudonym = try await ControlProcess.run(["pseudonym", "jane@contoso.com"], daemon: d)
        let shown = pseudonym.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let byPseudonym = try await ControlProcess.run(["logs", "--identity", shown, "--since", "-1h"], daemon: d, token: token)
        #expect(byPseudonym.status == 0 && shown.hasPrefix("user-"), "\(byPseudonym.errors)")
        #expect(byPseudonym.output.contains("no app protection policy for this user"), "\(byPseudonym.output)")
        #expect(byPseudonym.output.contains("user \(shown): with the records of the devices they used: \(Self.device)"))
        #expect(!byPseudonym.output.lowercased().contains("jane@contoso.com"), "\(byPseudonym.output)")
        let events2 = try await ControlProcess.run(["events", "--device", Self.device.lowercased()], daemon: d, token: token)
        #expect(events2.output.contains("LicensedNotTargeted (225)"))
        #expect(
            events2.output.contains("Next: Assign an app protection policy covering this app to a group the user is in."),
            "\(events2.output)")

        let ambiguous = try await d.ingestLogs(
            #"{"appId":"\#(Self.app)","deviceId":"4F0E9999-0000-4000-8000-000000000000","message":"another device"}"#)
        #expect(ambiguous.0 == 200)
        let refused = try await ControlProcess.run(["logs", "--device", "4f0e"], daemon: d)
        #expect(refused.status != 0 && refused.errors.contains("matches 2 devices"), "\(refused.errors)")

        let upload =
            #"{"appId":"\#(Self.app)","deviceId":"\#(Self.device)","identity":"jane@contoso.com","description":"jane@contoso.com: not targeted"}"#
        #expect(try await d.post("/v1/diagnostics", body: Array(upload.utf8), headers: [("Content-Type", "application/json")]).0 == 201)
        let incidents = try await ControlProcess.run(["incidents", "--since", "-1d", "--device", "4f0e2a1b"], daemon: d, token: token)
        #expect(
            incidents.status == 0 && incidents.output.contains("MAM-") && incidents.output.contains("[withheld: "), "\(incidents.output)")
        #expect(
            incidents.output.contains("a token with the pii scope shows it") && !incidents.output.contains("jane"), "\(incidents.output)")
        let story = try await ControlProcess.run(
            [
                "bundle", "--incident", try #require(incidents.output.firstMatch(of: /MAM-[A-Z0-9]{4}-[A-Z0-9]{4}/)).0.description, "-o",
                d.dataDirectory.appendingPathComponent("s.zip").path,
            ], daemon: d, token: token)
        #expect(
            story.status == 0 && story.output.contains("story:     device \(Self.device) around the upload"),
            "\(story.output)\(story.errors)")
        #expect(story.output.contains("records:   logs 1, telemetry 2"), "\(story.output)")
        let codes = try await ControlProcess.run(["status-codes", "licensedNotTargeted"], daemon: d)
        #expect(codes.output.contains("225") && codes.output.contains("no app protection policy targets them"), "\(codes.output)")
        let one = try await ControlProcess.run(["status-codes", "200", "--output", "json"], daemon: d)
        let explained = try JSONSerialization.jsonObject(with: Data(one.output.utf8)) as? [String: Any]
        #expect(
            (explained?["statusCodes"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["AccountNotLicensed"], "\(one.output)"
        )
        let unknown = try await ControlProcess.run(["status-codes", "999"], daemon: d)
        #expect(unknown.status != 0)
    }
}
