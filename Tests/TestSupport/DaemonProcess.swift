import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The built `mamtelemetryd` binary, started with its own data directory on a port it
/// chose itself. Integration tests drive it over real HTTP, and kill it for real.
///
/// The daemon listens on `127.0.0.1:0` and the test learns the port from its readiness
/// notification (`READY=1` with `STATUS=listening on …` on a `NOTIFY_SOCKET` the test
/// owns), as systemd would: no port is picked by binding and closing a socket first, so
/// two tests can never race for the same one. The port is kept for restarts.
public final class DaemonProcess: @unchecked Sendable {
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    public static var binary: URL { packageRoot.appendingPathComponent(".build/debug/mamtelemetryd") }

    public let dataDirectory: URL
    /// 0 until the first start learned it (unless the test fixed one).
    public private(set) var port: Int
    /// The running (or last) daemon; tests that start the binary another way (socket
    /// activation, the journald harness) set it so `kill`/`cleanUp` reach their process.
    public var process: ChildProcess?
    public let logFile: URL
    public var extraArguments: [String]
    public var environment: [String: String]
    /// The run's backend (`TestBackend.current`) and, on ClickHouse, the database this daemon
    /// writes: its own, kept across restarts, so tests never see each other's records.
    public let backend: TestBackend
    public let clickHouseDatabase: String
    /// Where readiness arrives; the test may pass its own to read every other notification.
    public let notify: NotifyListener
    private let ownsNotify: Bool
    /// A client of its own, replaced on every start: connections pooled to a daemon that was
    /// just SIGKILLed must not be reused for the next daemon (each would cost a timeout).
    public private(set) var client = DaemonProcess.makeClient()

    public static func makeClient() -> HTTPClient {
        HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                timeout: .init(connect: .seconds(5), read: .seconds(60)),
                connectionPool: .init(idleTimeout: .seconds(5))))
    }

    deinit {
        try? client.syncShutdown()
        if ownsNotify { notify.close() }
    }

    /// `port` 0 (the default) lets the daemon choose; give one only when another program
    /// must bind it for the daemon (`systemd-socket-activate`).
    public init(
        dataDirectory: URL? = nil, extraArguments: [String] = [], environment: [String: String] = [:],
        port: Int = 0, notify: NotifyListener? = nil
    ) throws {
        self.dataDirectory = dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.dataDirectory, withIntermediateDirectories: true)
        self.port = port
        logFile = self.dataDirectory.appendingPathComponent("daemon.log")
        self.extraArguments = extraArguments
        self.environment = environment
        backend = TestBackend.current
        clickHouseDatabase = TestBackend.uniqueDatabase()
        self.notify = try notify ?? NotifyListener()
        ownsNotify = notify == nil
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The admin token the daemon wrote on first start; sent with every request unless a
    /// test passes its own `Authorization`.
    public var adminToken: String? {
        (try? String(contentsOf: dataDirectory.appendingPathComponent("admin.token"), encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func authorize(_ headers: inout HTTPHeaders) {
        guard !headers.contains(name: "Authorization"), !headers.contains(name: "X-APIKey"), let t = adminToken else { return }
        headers.add(name: "Authorization", value: "Bearer \(t)")
    }

    /// The environment a daemon of this test starts with: the test's own, without the
    /// systemd variables of whatever runs the tests, plus `environment` and `NOTIFY_SOCKET`.
    public func daemonEnvironment() -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in [
            "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID", TestBackend.backendVariable,
            TestBackend.urlVariable,
        ] { env[key] = nil }
        for (k, v) in environment { env[k] = v }
        env["NOTIFY_SOCKET"] = notify.path
        return env
    }

    /// The command line that starts this daemon (for harnesses that wrap it): the run's
    /// backend flags first, unless the test chose a backend itself (`--store-backend`).
    public var commandLine: [String] {
        let backendArguments = extraArguments.contains("--store-backend") ? [] : backend.daemonArguments(database: clickHouseDatabase)
        return [Self.binary.path, "--data-dir", dataDirectory.path, "--listen", "127.0.0.1:\(port)"] + backendArguments + extraArguments
    }

    /// An append-mode descriptor of the log file, for a child's stdout and stderr.
    public func openLog() throws -> FileHandle {
        if !FileManager.default.fileExists(atPath: logFile.path) { _ = FileManager.default.createFile(atPath: logFile.path, contents: nil) }
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        return log
    }

    /// Starts the daemon, learns its port from `READY=1` and waits until `readyPath`
    /// answers 200.
    public func start(readyPath: String = "/readyz") async throws {
        let previous = client
        client = Self.makeClient()
        try? await previous.shutdown()
        let log = try openLog()
        defer { try? log.close() }
        let seen = notify.messages.count
        let command = commandLine
        process = try ChildProcess(
            command[0], Array(command.dropFirst()), environment: daemonEnvironment(),
            standardOutput: log.fileDescriptor, standardError: log.fileDescriptor)
        try await waitUntilReady(after: seen, path: readyPath)
    }

    /// Waits for a `READY=1` newer than the first `after` notifications, takes the port
    /// from its `STATUS=`, then polls `path` until 200.
    /// `alive` says whether what runs the daemon is still there (the daemon itself by default).
    public func waitUntilReady(
        after seen: Int, path: String = "/readyz", timeout: Duration = .seconds(30), alive: (@Sendable () -> Bool)? = nil
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        let alive = alive ?? { [process] in process?.isRunning ?? true }
        let ready = await notify.wait(timeout: timeout) { messages in
            messages.dropFirst(seen).contains { $0.has("READY=1") } || !alive()
        }?.dropFirst(seen).first { $0.has("READY=1") }
        guard let ready else {
            throw alive() ? DaemonError.notReady : DaemonError.exited(log: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "")
        }
        if let learned = Self.port(inStatusOf: ready) { port = learned }
        while ContinuousClock.now < deadline {
            if !alive() { throw DaemonError.exited(log: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "") }
            // A short timeout per attempt: right after a crash a pooled connection may be dead.
            if let (status, _) = try? await get(path, timeout: .seconds(2)), status == 200 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw DaemonError.notReady
    }

    /// The port at the end of `STATUS=listening on [IPv4]127.0.0.1/127.0.0.1:PORT`.
    public static func port(inStatusOf message: NotifyListener.Message) -> Int? {
        guard let status = message.text.split(separator: "\n").first(where: { $0.hasPrefix("STATUS=listening on ") }),
            let colon = status.lastIndex(of: ":")
        else { return nil }
        return Int(status[status.index(after: colon)...])
    }

    /// Signals the daemon and waits (bounded) for it to exit, SIGKILLing it after `timeout`.
    public func kill(signal: Int32 = SIGKILL, timeout: TimeInterval = 30) {
        guard let p = process, p.isRunning else { return }
        p.stop(signal: signal, timeout: .milliseconds(Int(timeout * 1000)))
    }

    /// The exit status once the process has ended.
    public var exitStatus: Int32? {
        guard let p = process, !p.isRunning else { return nil }
        return p.terminationStatus
    }

    public func stop() { kill(signal: SIGTERM) }

    public func cleanUp() {
        kill()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    public func post(_ path: String, body: [UInt8], headers: [(String, String)] = [], method: HTTPMethod = .POST) async throws -> (
        Int, [UInt8], HTTPHeaders
    ) {
        var r = HTTPClientRequest(url: baseURL + path)
        r.method = method
        for (k, v) in headers { r.headers.add(name: k, value: v) }
        authorize(&r.headers)
        r.body = .bytes(ByteBuffer(bytes: body))
        let resp = try await client.execute(r, timeout: .seconds(30))
        let bytes = try await resp.body.collect(upTo: 64 << 20)
        return (Int(resp.status.code), [UInt8](buffer: bytes), resp.headers)
    }

    public func get(_ path: String, headers: [(String, String)] = [], timeout: TimeAmount = .seconds(60)) async throws -> (Int, [UInt8]) {
        var r = HTTPClientRequest(url: baseURL + path)
        for (k, v) in headers { r.headers.add(name: k, value: v) }
        authorize(&r.headers)
        let resp = try await client.execute(r, timeout: timeout)
        let bytes = try await resp.body.collect(upTo: 256 << 20)
        return (Int(resp.status.code), [UInt8](buffer: bytes))
    }

    public func json(_ path: String) async throws -> [String: Any] {
        let (status, body) = try await get(path)
        guard status == 200 else { throw DaemonError.status(status, String(decoding: body, as: UTF8.self)) }
        return try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
    }

    /// Every event in `env`, following cursors.
    public func allEvents(env: String = "prod", extra: String = "") async throws -> [[String: Any]] {
        var out: [[String: Any]] = []
        var cursor: String?
        repeat {
            var path = "/v1/events?env=\(env)&limit=10000&order=asc\(extra)"
            if let cursor { path += "&cursor=\(cursor)" }
            let page = try await json(path)
            out += page["events"] as? [[String: Any]] ?? []
            cursor = page["nextCursor"] as? String
        } while cursor != nil
        return out
    }

    /// A port nobody listens on right now: only for a program that must be told a port
    /// before the daemon exists (`systemd-socket-activate`, a Prometheus scrape target).
    /// Daemons started with `start()` choose their own.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { ptr in
            ptr.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw DaemonError.noPort }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    public enum DaemonError: Error {
        case exited(log: String)
        case notReady
        case noPort
        case status(Int, String)
    }
}

public func parseJSON(_ bytes: [UInt8]) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]) ?? [:]
}
