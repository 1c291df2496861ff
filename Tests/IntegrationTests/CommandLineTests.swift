import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// `mamtelemetryctl` as a user types it, against the built daemon: relative times that start
/// with a dash, `--output table|json|ndjson` on every query command, `NO_COLOR`, and the
/// token commands configured through the environment.
@Suite(.serialized) struct CommandLineTests {
    static let app = "com.contoso.cli"

    /// A daemon holding two launches, one enrollment call and two log records, all received now.
    static func daemonWithRecords() async throws -> DaemonProcess {
        let d = try DaemonProcess()
        try await d.start()
        let now = ISO8601DateFormatter().string(from: Date())
        let events = [
            #"{"name":"AppLaunch","appId":"\#(app)","deviceId":"dev-1","eventId":"cli-1","time":"\#(now)","data":{"managementType":"MAM-WE"}}"#,
            #"{"name":"AppLaunch","appId":"\#(app)","deviceId":"dev-2","eventId":"cli-2","time":"\#(now)","data":{"managementType":"MDM"}}"#,
            #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"dev-1","eventId":"cli-3","time":"\#(now)","data":{"operation":"enroll","statusCode":100,"durationMs":90}}"#,
        ]
        let (status, answer, _) = try await d.post("/v1/telemetry", body: Array(events.joined(separator: "\n").utf8))
        #expect(status == 200, "\(String(decoding: answer, as: UTF8.self))")
        let logs =
            #"{"appId":"\#(app)","deviceId":"dev-1","level":"error","message":"cli token expired","time":"\#(now)"}"#
            + "\n" + #"{"appId":"\#(app)","deviceId":"dev-1","level":"info","message":"cli retried","time":"\#(now)"}"#
        #expect(try await d.ingestLogs(logs).0 == 200)
        return d
    }

    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").map { parseJSON(Array($0.utf8)) }
    }

    @Test func relativeTimesStartingWithADashParseOnEveryTimedCommand() async throws {
        let d = try await Self.daemonWithRecords()
        defer { d.cleanUp() }
        let events = try await ControlProcess.run(
            ["events", "--since", "-3d", "--until", "-0m", "--app", Self.app, "--output", "ndjson"], daemon: d)
        #expect(events.status == 0, "\(events.errors)")
        #expect(Set(Self.lines(events.output).compactMap { $0["eventId"] as? String }) == ["cli-1", "cli-2", "cli-3"])
        let logs = try await ControlProcess.run(["logs", "--since", "-3d", "--app", Self.app, "--output", "ndjson"], daemon: d)
        #expect(logs.status == 0, "\(logs.errors)")
        #expect(Self.lines(logs.output).count == 2, "\(logs.output)")
        for what in ["enrollment", "launches", "actions", "drops"] {
            let stats = try await ControlProcess.run(["stats", what, "--since", "-3d", "--output", "json"], daemon: d)
            #expect(stats.status == 0, "\(what): \(stats.errors)")
        }
        let launches = try await ControlProcess.run(
            ["stats", "launches", "--since", "-3d", "--app", Self.app, "--output", "json"], daemon: d)
        #expect(parseJSON(Array(launches.output.utf8))["total"] as? Int == 2, "\(launches.output)")
        // An hour ago is before every record: the window really was applied.
        let none = try await ControlProcess.run(
            ["events", "--since", "-3d", "--until", "-1h", "--app", Self.app, "--output", "ndjson"], daemon: d)
        #expect(none.status == 0 && none.output.isEmpty, "\(none.output)\(none.errors)")
        let archive = d.dataDirectory.appendingPathComponent("cli-bundle.zip").path
        let bundle = try await ControlProcess.run(["bundle", "--app", Self.app, "--since", "-3d", "-o", archive], daemon: d)
        #expect(bundle.status == 0, "\(bundle.errors)")
        #expect(bundle.output.contains("checksums: OK"), "\(bundle.output)")
    }

    @Test func everyQueryCommandPrintsTableJSONAndNDJSON() async throws {
        let d = try await Self.daemonWithRecords()
        defer { d.cleanUp() }
        #expect(try await d.post("/v1/apps/\(Self.app)", body: Array(#"{"usePPE":false,"source":"api"}"#.utf8), method: .PUT).0 == 200)

        /// (arguments, the answer's list member, a field every item has, a column the table shows)
        let commands: [([String], String?, String, String)] = [
            (["events", "--app", Self.app], "events", "eventId", "DETAIL"),
            (["logs", "--app", Self.app], "logs", "message", "cli token expired"),
            (["stats", "launches", "--app", Self.app], "buckets", "start", "MAM-WE"),
            (["tokens", "list"], "tokens", "id", "SCOPES"),
            (["apps", "list"], "apps", "appId", "TELEMETRY DISABLED"),
            (["pseudonym", "Jane@Contoso.com"], nil, "pseudonym", "user-"),
        ]
        for (arguments, member, field, column) in commands {
            let json = try await ControlProcess.run(arguments + ["--output", "json"], daemon: d)
            #expect(json.status == 0, "\(arguments): \(json.errors)")
            let answer = parseJSON(Array(json.output.utf8))
            let items = member.map { answer[$0] as? [[String: Any]] ?? [] } ?? [answer]
            #expect(!items.isEmpty && items.allSatisfy { $0[field] != nil }, "\(arguments) json: \(json.output)")

            let ndjson = try await ControlProcess.run(arguments + ["--output", "ndjson"], daemon: d)
            #expect(ndjson.status == 0, "\(arguments): \(ndjson.errors)")
            let lines = Self.lines(ndjson.output)
            #expect(lines.count == items.count && lines.allSatisfy { $0[field] != nil }, "\(arguments) ndjson: \(ndjson.output)")

            let table = try await ControlProcess.run(arguments + ["--output", "table"], daemon: d)
            #expect(table.status == 0 && table.output.contains(column), "\(arguments) table: \(table.output)")
            #expect(!table.output.hasPrefix("{"), "\(arguments) table: \(table.output)")
        }
        let refused = try await ControlProcess.run(["logs", "-f", "--output", "json"], daemon: d)
        #expect(refused.status != 0 && refused.errors.contains("--output ndjson"), "\(refused.errors)")
    }

    /// On a terminal (a pty from `script`) levels are coloured; `NO_COLOR` or a pipe turns the
    /// escapes off.
    @Test func coloursOnlyOnATerminalWithoutNoColor() async throws {
        let d = try await Self.daemonWithRecords()
        defer { d.cleanUp() }
        let command = [ControlProcess.binary.path, "logs", "--app", Self.app, "--url", d.baseURL, "--token", d.adminToken ?? ""]
            .joined(separator: " ")
        let escape = "\u{1B}["
        let coloured = try BundleFleet.system("/usr/bin/script", ["-qec", command, "/dev/null"], environment: ["NO_COLOR": ""])
        #expect(coloured.status == 0 && coloured.stdout.contains("cli token expired"), "\(coloured.stdout)\(coloured.stderr)")
        #expect(coloured.stdout.contains(escape), "a terminal without NO_COLOR gets colour: \(coloured.stdout)")
        let plain = try BundleFleet.system("/usr/bin/script", ["-qec", command, "/dev/null"], environment: ["NO_COLOR": "1"])
        #expect(plain.status == 0 && plain.stdout.contains("cli token expired"), "\(plain.stdout)\(plain.stderr)")
        #expect(!plain.stdout.contains(escape), "NO_COLOR: \(plain.stdout)")
        let piped = try BundleFleet.system(
            ControlProcess.binary.path, Array(command.split(separator: " ").dropFirst().map(String.init)), environment: ["NO_COLOR": ""])
        #expect(piped.status == 0 && piped.stdout.contains("cli token expired") && !piped.stdout.contains(escape), "\(piped.stdout)")
    }

    /// `tokens create|list|revoke` with the URL and token from the environment: the secret is
    /// printed once, never listed, and a revoked token is refused by the daemon at once.
    @Test func tokensCreateListRevoke() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let env = ["MAMTELEMETRY_URL": d.baseURL, "MAMTELEMETRY_TOKEN": d.adminToken ?? ""]
        func events(_ token: String) async throws -> Int {
            try await d.post("/v1/events", body: [], headers: [("Authorization", "Bearer \(token)")], method: .GET).0
        }
        let (c1, secret, err) = try Self.ctl(
            ["tokens", "create", "--name", "collector-a", "--scope", "ingest", "--scope", "read", "--app", "com.contoso.a"], env)
        #expect(c1 == 0, "\(err)")
        let token = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("mamt_"))
        #expect(err.contains("shown only now"))
        #expect(try await events(token) == 200)
        let (c2, table, _) = try Self.ctl(["tokens", "list"], env)
        #expect(c2 == 0)
        #expect(
            table.contains("collector-a") && table.contains("ingest,read") && table.contains("com.contoso.a") && table.contains("active"))
        #expect(!table.contains(String(token.split(separator: "_").last!)))
        let id = String(token.split(separator: "_")[1])
        let (c3, out, _) = try Self.ctl(["tokens", "revoke", id], env)
        #expect(c3 == 0 && out.contains("revoked \(id)"))
        #expect(try await events(token) == 401)
        let (_, after, _) = try Self.ctl(["tokens", "list"], env)
        #expect(after.contains("revoked"))
        let (c4, _, bad) = try Self.ctl(["tokens", "create", "--name", "x", "--scope", "everything"], env)
        #expect(c4 != 0 && bad.contains("unknown scope"))
        let (c5, _, denied) = try Self.ctl(["tokens", "list"], ["MAMTELEMETRY_URL": d.baseURL, "MAMTELEMETRY_TOKEN": "mamt_00000000_00"])
        #expect(c5 != 0 && denied.contains("401"))
    }

    /// Runs `mamtelemetryctl` to completion with `env` added to this process's environment
    /// (less `MAMTELEMETRY_DATA_DIR`, so the URL and token come from `env`).
    static func ctl(_ args: [String], _ env: [String: String]) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = ControlProcess.binary
        p.arguments = args
        var e = ProcessInfo.processInfo.environment
        e.removeValue(forKey: "MAMTELEMETRY_DATA_DIR")
        for (k, v) in env { e[k] = v }
        p.environment = e
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let r = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: r, as: UTF8.self))
    }
}
