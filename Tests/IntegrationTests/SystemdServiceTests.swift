import AsyncHTTPClient
import Foundation
import Synchronization
import TestSupport
import Testing

/// The daemon as a systemd service (issue 4, SPEC §7), driven through the interfaces
/// systemd itself uses — without booting systemd (SPEC §11): `sd_notify` datagrams on a
/// socket the test owns (`NOTIFY_SOCKET`, `WATCHDOG_USEC`), signals (SIGTERM, SIGHUP) and
/// an inherited listening socket (`systemd-socket-activate`, `LISTEN_FDS`/`LISTEN_PID`).
@Suite(.serialized) struct SystemdServiceTests {
    @Test("READY=1 after /readyz, watchdog pings, STATUS=, STOPPING=1, clean exit, nothing acknowledged lost")
    func notifyLifecycle() async throws {
        let notify = try NotifyListener()
        defer { notify.close() }
        let d = try DaemonProcess(environment: ["WATCHDOG_USEC": "2000000"], notify: notify)
        defer { d.cleanUp() }

        // The moment READY=1 arrives, /readyz must already answer 200.
        // (The port is read from the READY=1 datagram itself: `d` learns it only after.)
        async let statusAtReady: Int? = {
            guard let ready = await notify.wait(for: "READY=1", timeout: .seconds(30)),
                let port = DaemonProcess.port(inStatusOf: ready)
            else { return nil }
            let answer = try? await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/readyz"), timeout: .seconds(10))
            return answer.map { Int($0.status.code) }
        }()
        try await d.start()
        #expect(await statusAtReady == 200, "READY=1 came before the daemon answered /readyz")
        let ready = try #require(notify.messages.first { $0.has("READY=1") })
        #expect(ready.text.contains("STATUS=listening on"), "READY=1 datagram: \(ready.text)")

        // WATCHDOG_USEC=2 s: a ping every second, sent only while the committer is healthy.
        #expect(await notify.wait(timeout: .seconds(5)) { $0.count { $0.has("WATCHDOG=1") } >= 3 } != nil)
        let pings = notify.messages.filter { $0.has("WATCHDOG=1") }.map(\.at)
        if pings.count >= 3 {
            #expect(pings[2] - pings[0] < .milliseconds(3500), "pings too far apart: \(pings)")
        }
        let statusLines = notify.messages.filter { $0.text.contains("STATUS=accepting") }
        #expect(!statusLines.isEmpty, "no STATUS= line from the running daemon: \(notify.messages.map(\.text))")

        // Events acknowledged before SIGTERM must all be there after a restart.
        let marker = "sd-\(UUID().uuidString)"
        var acknowledged = 0
        for batch in 0..<5 {
            let lines = (0..<20).map { #"{"name":"AppLaunch","appId":"com.sd.test","deviceId":"\#(marker)-\#(batch)-\#($0)"}"# }
            let (status, body, _) = try await d.post("/v1/telemetry", body: Array(lines.joined(separator: "\n").utf8))
            #expect(status == 200)
            acknowledged += parseJSON(body)["accepted"] as? Int ?? 0
        }
        #expect(acknowledged == 100)

        d.kill(signal: SIGTERM, timeout: 20)
        #expect(d.exitStatus == 0, "exit status \(String(describing: d.exitStatus)); log:\n\(Self.log(of: d))")
        #expect(notify.messages.contains { $0.has("STOPPING=1") }, "no STOPPING=1: \(notify.messages.map(\.text))")

        let again = try DaemonProcess(dataDirectory: d.dataDirectory)
        defer { again.kill() }
        try await again.start()
        let stored = try await again.allEvents().compactMap { $0["deviceId"] as? String }.filter { $0.hasPrefix(marker) }
        #expect(stored.count == acknowledged, "acknowledged \(acknowledged), found \(stored.count) after restart")
        again.stop()
    }

    @Test("SIGHUP applies a good config without dropping connections and refuses a bad one")
    func reloadGoodAndBadConfig() async throws {
        let notify = try NotifyListener()
        defer { notify.close() }
        let (d, config) = try Self.daemon(config: "apps:\n  telemetryDisabled: []\n", notify: notify)
        defer { Self.cleanUp(d, config) }
        try await d.start()
        let pid = try #require(d.process?.processIdentifier)

        func post(_ appId: String) async throws -> [String: Any] {
            let line = #"{"name":"AppLaunch","appId":"\#(appId)","deviceId":"reload-test"}"#
            let (status, body, _) = try await d.post("/v1/telemetry", body: Array(line.utf8))
            #expect(status == 200)
            return parseJSON(body)
        }
        func dropped(_ answer: [String: Any]) -> Int { (answer["dropped"] as? [String: Int])?["telemetryDisabled"] ?? 0 }
        #expect(try await post("com.x")["accepted"] as? Int == 1)

        // A keep-alive connection opened before the reload must still answer after it.
        let connection = try KeepAliveConnection(port: d.port)
        defer { connection.close() }
        #expect(try connection.get("/healthz") == 200)

        // Good config: com.x becomes opted out; RELOADING=1 then READY=1.
        try "apps:\n  telemetryDisabled: [com.x]\n".write(to: config, atomically: true, encoding: .utf8)
        let before = notify.messages.count
        kill(pid, SIGHUP)
        let reloaded = await notify.wait(timeout: .seconds(10)) { messages in
            let fresh = messages.dropFirst(before)
            guard let reloading = fresh.firstIndex(where: { $0.has("RELOADING=1") }) else { return false }
            return fresh[reloading...].contains { $0.has("READY=1") }
        }
        #expect(reloaded != nil, "no RELOADING=1 then READY=1 after SIGHUP: \(notify.messages.dropFirst(before).map(\.text))")
        let afterGood = try await post("com.x")
        #expect(dropped(afterGood) == 1 && afterGood["accepted"] as? Int == 0, "com.x not dropped after reload: \(afterGood)")
        #expect(try await post("com.y")["accepted"] as? Int == 1)
        #expect(try connection.get("/healthz") == 200, "the keep-alive connection did not survive the reload")

        // Bad config: refused with a log line; the daemon runs on with the old settings.
        try "store:\n  zlibLevel: 42\n".write(to: config, atomically: true, encoding: .utf8)
        let beforeBad = notify.messages.count
        kill(pid, SIGHUP)
        let answered = await notify.wait(timeout: .seconds(10)) { messages in
            messages.dropFirst(beforeBad).contains { $0.has("READY=1") }
        }
        #expect(answered != nil, "no READY=1 after the bad reload")
        let refusedLine = await Self.waitForLog(of: d, containing: "reload refused", timeout: .seconds(5))
        #expect(refusedLine != nil, "no 'reload refused' line in the log:\n\(Self.log(of: d))")
        #expect(refusedLine?.contains("zlibLevel") == true, "the refusal does not name the bad key: \(refusedLine ?? "")")
        #expect(d.process?.isRunning == true)
        #expect(try await d.get("/readyz").0 == 200)
        let afterBad = try await post("com.x")
        #expect(dropped(afterBad) == 1, "the previous config is no longer in force: \(afterBad)")
        #expect(try connection.get("/healthz") == 200, "the keep-alive connection did not survive the refused reload")

        d.kill(signal: SIGTERM, timeout: 20)
        #expect(d.exitStatus == 0)
    }

    @Test("SIGHUP applies retention, the metrics token and the kill switch at once, and names restart-only keys")
    func reloadAppliesLiveSettingsAndListsRestartOnlyKeys() async throws {
        let notify = try NotifyListener()
        defer { notify.close() }
        let (d, config) = try Self.daemon(
            config: "apps:\n  telemetryDisabled: [com.k]\n", environment: ["WATCHDOG_USEC": "2000000"], notify: notify)
        defer { Self.cleanUp(d, config) }
        try await d.start()
        let pid = try #require(d.process?.processIdentifier)

        let lines = (0..<50).map { #"{"name":"AppLaunch","appId":"com.r","deviceId":"reload-\#($0)"}"# }
        #expect(try await d.post("/v1/telemetry", body: Array(lines.joined(separator: "\n").utf8)).0 == 200)
        #expect(try await d.allEvents(extra: "&app=com.r").count == 50)
        #expect(try await d.get("/metrics", headers: [("Authorization", "Bearer none")]).0 == 200)
        let (_, _, killedBefore) = try await d.post("/v1/telemetry", body: Array(#"{"name":"AppLaunch","appId":"com.k"}"#.utf8))
        #expect(killedBefore.first(name: "Kill-Duration") == "86400")

        // A size cap no data fits in, a token for /metrics, a shorter kill switch, and a
        // store setting that only a restart can apply.
        try """
        apps:
          telemetryDisabled: [com.k]
        retention:
          prod:
            maxBytes: 1
        auth:
          metricsRequireToken: true
        killSwitch:
          seconds: 600
        store:
          zlibLevel: 3
        """.write(to: config, atomically: true, encoding: .utf8)
        let before = notify.messages.count
        kill(pid, SIGHUP)
        let reloaded = await notify.wait(timeout: .seconds(10)) { messages in
            messages.dropFirst(before).contains { $0.has("READY=1") }
        }
        let ready = try #require(reloaded?.dropFirst(before).first { $0.has("READY=1") }, "no READY=1 after SIGHUP")
        #expect(ready.text.contains("restart needed to apply: store.zlibLevel"), "STATUS= after reload: \(ready.text)")

        let line = try #require(
            await Self.waitForLog(of: d, containing: "configuration reloaded", timeout: .seconds(5)), "\(Self.log(of: d))")
        for key in ["retention.prod.maxBytes", "auth.metricsRequireToken", "killSwitch.seconds"] {
            #expect(line.contains(key), "\(key) not named as applied: \(line)")
        }
        #expect(line.contains("needs a restart to apply: store.zlibLevel"), "\(line)")

        // Applied: retention ran with the new cap, /metrics wants a token, the kill switch is shorter.
        var left = -1
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            left = try await d.allEvents(extra: "&app=com.r").count
            if left == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(left == 0, "the reloaded size cap was not applied: \(left) events left")
        #expect(try await d.get("/metrics", headers: [("Authorization", "Bearer none")]).0 == 401)
        let (_, _, killedAfter) = try await d.post("/v1/telemetry", body: Array(#"{"name":"AppLaunch","appId":"com.k"}"#.utf8))
        #expect(killedAfter.first(name: "Kill-Duration") == "600")
        // Until a restart, every status line says what is waiting for it.
        let later = notify.messages.count
        let status = await notify.wait(timeout: .seconds(15)) { $0.dropFirst(later).contains { $0.text.contains("STATUS=accepting") } }
        #expect(
            status?.dropFirst(later).first { $0.text.contains("STATUS=accepting") }?.text.contains("store.zlibLevel") == true,
            "the periodic STATUS= line dropped the restart notice")

        d.kill(signal: SIGTERM, timeout: 20)
        #expect(d.exitStatus == 0)
    }

    @Test("socket activation: serves on the inherited socket and binds nothing else")
    func socketActivation() async throws {
        let activate = try #require(
            ["/usr/bin/systemd-socket-activate", "/bin/systemd-socket-activate"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "systemd-socket-activate (package systemd) is not installed")
        let notify = try NotifyListener()
        defer { notify.close() }
        // `d.port` is the socket systemd-socket-activate binds (it must be told a number);
        // `--listen` names another free port that must stay unbound.
        let d = try DaemonProcess(port: try DaemonProcess.freePort(), notify: notify)
        defer { d.cleanUp() }
        let unused = try DaemonProcess.freePort()
        let log = try d.openLog()
        defer { try? log.close() }
        // systemd-socket-activate execs the daemon in place, so `d.process` is the daemon.
        d.process = try ChildProcess(
            activate,
            [
                "--listen=127.0.0.1:\(d.port)", "--setenv=NOTIFY_SOCKET=\(notify.path)",
                DaemonProcess.binary.path, "--data-dir", d.dataDirectory.path, "--listen", "127.0.0.1:\(unused)",
            ],
            environment: d.daemonEnvironment().filter { $0.key != "NOTIFY_SOCKET" },
            standardOutput: log.fileDescriptor, standardError: log.fileDescriptor)

        // Without --accept, systemd-socket-activate execs the daemon on the first
        // connection (which then waits in the backlog): the first request starts it.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, (try? await d.get("/readyz", timeout: .seconds(30)).0) != 200 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await d.get("/readyz").0 == 200, "log:\n\(Self.log(of: d))")
        #expect(await notify.wait(for: "READY=1", timeout: .seconds(5)) != nil, "no READY=1; log:\n\(Self.log(of: d))")
        let marker = "sa-\(UUID().uuidString)"
        let line = #"{"name":"AppLaunch","appId":"com.sa.test","deviceId":"\#(marker)"}"#
        let (status, body, headers) = try await d.post("/v1/telemetry", body: Array(line.utf8))
        #expect(status == 200 && parseJSON(body)["accepted"] as? Int == 1)
        #expect(headers.first(name: "Server") == "mamtelemetryd")
        #expect(headers.first(name: "Date")?.hasSuffix(" GMT") == true)
        #expect(try await d.allEvents().contains { $0["deviceId"] as? String == marker })
        // Errors still become HTTP answers (401 without a token, 404 for no route).
        #expect(try await d.get("/v1/events?env=prod", headers: [("Authorization", "Bearer nope")]).0 == 401)
        #expect(try await d.get("/no/such/route").0 == 404)

        let serving = Self.log(of: d).split(separator: "\n").first { $0.contains("serving on the socket systemd passed") }
        #expect(serving?.contains("fd 3 (127.0.0.1:\(d.port))") == true, "log line: \(serving ?? "none")")
        #expect(Self.canBind(port: unused), "the daemon bound its --listen port although a socket was passed")

        d.kill(signal: SIGTERM, timeout: 20)
        #expect(d.exitStatus == 0, "exit status \(String(describing: d.exitStatus)); log:\n\(Self.log(of: d))")
        #expect(notify.messages.contains { $0.has("STOPPING=1") })
    }

    @Test("socket activation: a request in flight at SIGTERM is answered before the daemon exits")
    func socketActivationDrainsInFlight() async throws {
        let activate = try #require(
            ["/usr/bin/systemd-socket-activate", "/bin/systemd-socket-activate"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let d = try DaemonProcess(port: try DaemonProcess.freePort())
        defer { d.cleanUp() }
        let log = try d.openLog()
        defer { try? log.close() }
        d.process = try ChildProcess(
            activate, ["--listen=127.0.0.1:\(d.port)", DaemonProcess.binary.path, "--data-dir", d.dataDirectory.path],
            environment: d.daemonEnvironment().filter { $0.key != "NOTIFY_SOCKET" },
            standardOutput: log.fileDescriptor, standardError: log.fileDescriptor)
        // The first connection makes systemd-socket-activate exec the daemon.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, (try? await d.get("/readyz", timeout: .seconds(30)).0) != 200 {
            try await Task.sleep(for: .milliseconds(50))
        }
        let token = try #require(d.adminToken)

        // Send the headers and half the body, SIGTERM, then the rest: the request started
        // before shutdown, so it must be answered (and its event stored), then the idle
        // keep-alive connection closed.
        let marker = "drain-\(UUID().uuidString)"
        let payload = Array(#"{"name":"AppLaunch","appId":"com.drain","deviceId":"\#(marker)"}"#.utf8)
        let connection = try KeepAliveConnection(port: d.port)
        defer { connection.close() }
        try connection.send(
            Array(
                ("POST /v1/telemetry HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Length: \(payload.count)\r\n\r\n").utf8) + payload.prefix(10))
        try await Task.sleep(for: .milliseconds(300))
        d.process?.signal(SIGTERM)
        try await Task.sleep(for: .milliseconds(300))
        try connection.send(Array(payload.dropFirst(10)))
        let (status, body) = try connection.readResponse()
        #expect(status == 200, "in-flight request answered \(status): \(String(decoding: body, as: UTF8.self))")
        #expect(parseJSON(body)["accepted"] as? Int == 1)
        d.kill(signal: SIGTERM, timeout: 20)
        #expect(d.exitStatus == 0, "log:\n\(Self.log(of: d))")

        let again = try DaemonProcess(dataDirectory: d.dataDirectory)
        defer { again.kill() }
        try await again.start()
        #expect(try await again.allEvents().contains { $0["deviceId"] as? String == marker })
        again.stop()
    }

    // MARK: helpers

    /// A daemon (not started) reading `config` from a YAML file in a fresh directory that
    /// also holds its data directory; returns the daemon and the file.
    static func daemon(config text: String, environment: [String: String] = [:], notify: NotifyListener) throws -> (DaemonProcess, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("config.yaml")
        try text.write(to: config, atomically: true, encoding: .utf8)
        let d = try DaemonProcess(
            dataDirectory: directory.appendingPathComponent("data"), extraArguments: ["--config", config.path], environment: environment,
            notify: notify)
        return (d, config)
    }

    static func cleanUp(_ d: DaemonProcess, _ config: URL) {
        d.cleanUp()
        try? FileManager.default.removeItem(at: config.deletingLastPathComponent())
    }

    /// The daemon's log: its stderr file, plus its journal entries when a journald runs on
    /// this host (the daemon then logs there instead of to stderr).
    static func log(of d: DaemonProcess) -> String {
        var text = (try? String(contentsOf: d.logFile, encoding: .utf8)) ?? ""
        if FileManager.default.fileExists(atPath: "/run/systemd/journal/socket"), let pid = d.process?.processIdentifier {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
            p.arguments = ["--no-pager", "-o", "cat", "_PID=\(pid)"]
            let pipe = Pipe()
            p.standardOutput = pipe
            p.standardError = FileHandle.nullDevice
            if (try? p.run()) != nil {
                let deadline = Date().addingTimeInterval(5)
                while p.isRunning && Date() < deadline { usleep(10_000) }
                if p.isRunning { p.terminate() }
                text += String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
            }
        }
        return text
    }

    static func waitForLog(of d: DaemonProcess, containing needle: String, timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        repeat {
            if let line = log(of: d).split(separator: "\n").first(where: { $0.contains(needle) }) { return String(line) }
            try? await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return nil
    }

    /// Whether nobody listens on `port`: binding it succeeds.
    static func canBind(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
