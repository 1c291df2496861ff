import Foundation

/// A system tool (`unzip`, `tar`, `bash`, a built client program) run to completion with its
/// output captured. Bundles are read with the system's `unzip` and `tar`, never with our own
/// reader, so an archive the daemon writes is checked by an independent one.
public enum SystemCommand {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public enum Failure: Error { case unpack(String) }

    /// Runs `tool` with `arguments` (in `directory` if given) and the test's environment
    /// without `MAMTELEMETRY_TOKEN`, plus `environment`.
    public static func run(
        _ tool: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    ) throws -> Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "MAMTELEMETRY_TOKEN")
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("ctl-\(UUID().uuidString)")
        let err = out.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        p.waitUntilExit()
        return Output(
            status: p.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
            stderr: try String(contentsOf: err, encoding: .utf8))
    }

    /// Unpacks a `.zip` with `unzip` or anything else with `tar xzf`, and returns every member.
    public static func unpack(_ archive: String) throws -> [String: [UInt8]] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("unpack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let run =
            archive.hasSuffix(".zip")
            ? try Self.run("/usr/bin/unzip", ["-q", archive, "-d", dir.path])
            : try Self.run("/usr/bin/tar", ["xzf", archive, "-C", dir.path])
        guard run.status == 0 else { throw Failure.unpack("\(archive): \(run.stderr)") }
        var members: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            members[name] = try [UInt8](Data(contentsOf: dir.appendingPathComponent(name)))
        }
        return members
    }
}
