import Foundation

/// Private clickhouse-server instances for a test, started and stopped through
/// `scripts/clickhouse/server.sh` (own config, data directory and ports under a temporary
/// directory; never the system service). Tests that need one skip only when
/// `clickhouse-server` is not installed (`isInstalled`); CI installs it (scripts/deps.sh).
public final class PrivateClickHouse: @unchecked Sendable {
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/clickhouse-server") }
    static var script: URL { DaemonProcess.packageRoot.appendingPathComponent("scripts/clickhouse/server.sh") }

    public let directory: URL
    /// One HTTP URL per shard, shard 0 first.
    public private(set) var urls: [URL] = []
    public let cluster: String

    /// Starts `shards` servers with one cluster (`cluster`) spanning them. Port bases are
    /// picked at random below the kernel's ephemeral range (from 32768 here and by default):
    /// a port that is the local end of some client's connection fails the server's bind
    /// (18.16 exits 70) as surely as a listener does. A base found taken, before the start or
    /// by the server itself, makes the script exit 3 and is retried here on another one.
    public init(shards: Int = 1, cluster: String = "mam_cluster") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ch-\(UUID().uuidString.prefix(8))")
        self.cluster = cluster
        var deaths = 0
        for _ in 0..<8 {
            let base = Int.random(in: 100..<320) * 100
            let (status, output) = try Self.run([
                "start", "--dir", directory.path, "--shards", "\(shards)", "--http-port", "\(base)", "--cluster", cluster,
            ])
            if status == 0 {
                urls = output.split(separator: "\n").compactMap { URL(string: String($0).trimmingCharacters(in: .whitespaces)) }
                return
            }
            if status != 3 {
                deaths += 1
                if deaths == 3 { throw Failure(message: "server.sh start exited \(status) on three port bases: \(output)") }
            }
        }
        throw Failure(message: "no ClickHouse started after 8 port bases (taken, or the server died at start-up)")
    }

    /// Stops shard `shard` (or every shard) and waits until it is down.
    public func stop(shard: Int? = nil, timeoutSeconds: Int = 60) throws {
        var args = ["stop", "--dir", directory.path, "--timeout", "\(timeoutSeconds)"]
        if let shard { args += ["--shard", "\(shard)"] }
        _ = try Self.run(args)
    }

    /// Starts a stopped shard again on its old ports and data.
    public func resume(shard: Int? = nil) throws {
        var args = ["resume", "--dir", directory.path]
        if let shard { args += ["--shard", "\(shard)"] }
        let (status, output) = try Self.run(args)
        if status != 0 { throw Failure(message: "server.sh resume exited \(status): \(output)") }
    }

    /// Stops every shard and removes the data.
    public func destroy() {
        // The data goes too, so a server slow to shut down is not waited for.
        _ = try? stop(timeoutSeconds: 3)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs one statement on `url` with curl-like plainness (no compression) and returns the
    /// answer text; throws with ClickHouse's message on an error status.
    public func query(_ sql: String, url: URL? = nil) async throws -> String {
        try await inspector(url ?? urls[0]).query(sql)
    }

    /// An auditor's view of shard `url` (shard 0 by default).
    public func inspector(_ url: URL? = nil) -> ClickHouseInspector { ClickHouseInspector(url: url ?? urls[0]) }

    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    static func run(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.standardError
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
