import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The built `mamtelemetryd` binary, started on a free loopback port with its own data
/// directory. Integration tests drive it over real HTTP, and kill it for real.
final class DaemonProcess: @unchecked Sendable {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var binary: URL { packageRoot.appendingPathComponent(".build/debug/mamtelemetryd") }

    let dataDirectory: URL
    let port: Int
    var process: Process?
    let logFile: URL
    var extraArguments: [String]
    var environment: [String: String]
    /// A client of its own, replaced on every start: connections pooled to a daemon that was
    /// just SIGKILLed must not be reused for the next daemon (each would cost a timeout).
    private(set) var client = DaemonProcess.makeClient()

    static func makeClient() -> HTTPClient {
        HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(
            timeout: .init(connect: .seconds(5), read: .seconds(60)),
            connectionPool: .init(idleTimeout: .seconds(5))))
    }

    deinit { try? client.syncShutdown() }

    init(dataDirectory: URL? = nil, extraArguments: [String] = [], environment: [String: String] = [:]) throws {
        self.dataDirectory = dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.dataDirectory, withIntermediateDirectories: true)
        port = try Self.freePort()
        logFile = self.dataDirectory.appendingPathComponent("daemon.log")
        self.extraArguments = extraArguments
        self.environment = environment
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The admin token the daemon wrote on first start; sent with every request unless a
    /// test passes its own `Authorization`.
    var adminToken: String? {
        (try? String(contentsOf: dataDirectory.appendingPathComponent("admin.token"), encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func authorize(_ headers: inout HTTPHeaders) {
        guard !headers.contains(name: "Authorization"), !headers.contains(name: "X-APIKey"), let t = adminToken else { return }
        headers.add(name: "Authorization", value: "Bearer \(t)")
    }

    /// Starts the daemon and waits until `/readyz` answers 200.
    func start() async throws {
        let previous = client
        client = Self.makeClient()
        try? await previous.shutdown()
        let p = Process()
        p.executableURL = Self.binary
        p.arguments = ["--data-dir", dataDirectory.path, "--listen", "127.0.0.1:\(port)"] + extraArguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NOTIFY_SOCKET")
        env.removeValue(forKey: "LISTEN_FDS")
        for (k, v) in environment { env[k] = v }
        p.environment = env
        if !FileManager.default.fileExists(atPath: logFile.path) { FileManager.default.createFile(atPath: logFile.path, contents: nil) }
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        try p.run()
        process = p
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if !p.isRunning { throw DaemonError.exited(log: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "") }
            // A short timeout per attempt: right after a crash a pooled connection may be dead.
            if let (status, _) = try? await get("/readyz", timeout: .seconds(2)), status == 200 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw DaemonError.notReady
    }

    /// Signals the daemon and waits (bounded) for it to exit. Polls instead of
    /// `waitUntilExit()`, which can block a cooperative thread indefinitely on Linux — with
    /// two cores that starves every other test.
    func kill(signal: Int32 = SIGKILL, timeout: TimeInterval = 30) {
        guard let p = process, p.isRunning else { return }
        Foundation.kill(p.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { usleep(5_000) }
        if p.isRunning {
            Foundation.kill(p.processIdentifier, SIGKILL)
            // Bounded: Foundation sometimes never reaps a child under heavy parallel use, and
            // an unbounded wait here would hold a cooperative thread forever.
            let last = Date().addingTimeInterval(5)
            while p.isRunning && Date() < last {
                var status: Int32 = 0
                if waitpid(p.processIdentifier, &status, WNOHANG) == p.processIdentifier { break }
                usleep(5_000)
            }
        }
    }

    /// The exit status once the process has ended.
    var exitStatus: Int32? {
        guard let p = process, !p.isRunning else { return nil }
        return p.terminationStatus
    }

    func stop() { kill(signal: SIGTERM) }

    func cleanUp() {
        kill()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    func post(_ path: String, body: [UInt8], headers: [(String, String)] = [], method: HTTPMethod = .POST) async throws -> (Int, [UInt8], HTTPHeaders) {
        var r = HTTPClientRequest(url: baseURL + path)
        r.method = method
        for (k, v) in headers { r.headers.add(name: k, value: v) }
        authorize(&r.headers)
        r.body = .bytes(ByteBuffer(bytes: body))
        let resp = try await client.execute(r, timeout: .seconds(30))
        let bytes = try await resp.body.collect(upTo: 64 << 20)
        return (Int(resp.status.code), [UInt8](buffer: bytes), resp.headers)
    }

    func get(_ path: String, headers: [(String, String)] = [], timeout: TimeAmount = .seconds(60)) async throws -> (Int, [UInt8]) {
        var r = HTTPClientRequest(url: baseURL + path)
        for (k, v) in headers { r.headers.add(name: k, value: v) }
        authorize(&r.headers)
        let resp = try await client.execute(r, timeout: timeout)
        let bytes = try await resp.body.collect(upTo: 256 << 20)
        return (Int(resp.status.code), [UInt8](buffer: bytes))
    }

    func json(_ path: String) async throws -> [String: Any] {
        let (status, body) = try await get(path)
        guard status == 200 else { throw DaemonError.status(status, String(decoding: body, as: UTF8.self)) }
        return try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
    }

    /// Every event in `env`, following cursors.
    func allEvents(env: String = "prod", extra: String = "") async throws -> [[String: Any]] {
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

    static func freePort() throws -> Int {
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

    enum DaemonError: Error {
        case exited(log: String)
        case notReady
        case noPort
        case status(Int, String)
    }
}

func parseJSON(_ bytes: [UInt8]) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]) ?? [:]
}
