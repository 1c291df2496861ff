import Foundation
import TestSupport

/// A built client program (`mamtelemetryctl`, or `mamtelemetry-bench`), run as a child process
/// with its output captured.
final class ControlProcess: @unchecked Sendable {
    static var binary: URL { program("mamtelemetryctl") }
    static var benchBinary: URL { program("mamtelemetry-bench") }
    static func program(_ name: String) -> URL { DaemonProcess.packageRoot.appendingPathComponent(".build/debug/\(name)") }

    let process = Process()
    private let lock = NSLock()
    private var output = Data()
    private var errors = Data()

    /// Starts `<binary> <arguments>` against `daemon` (its URL, and `token` or its admin token).
    init(_ arguments: [String], daemon: DaemonProcess, token: String? = nil, binary: URL = ControlProcess.binary) throws {
        process.executableURL = binary
        process.arguments = arguments + ["--url", daemon.baseURL, "--token", token ?? daemon.adminToken ?? ""]
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        out.fileHandleForReading.readabilityHandler = { [weak self] h in
            let chunk = h.availableData
            self?.lock.withLock { self?.output.append(chunk) }
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] h in
            let chunk = h.availableData
            self?.lock.withLock { self?.errors.append(chunk) }
        }
        try process.run()
    }

    var standardOutput: String { lock.withLock { String(decoding: output, as: UTF8.self) } }
    var standardError: String { lock.withLock { String(decoding: errors, as: UTF8.self) } }

    /// Waits until the output contains `text`; false on timeout or exit without it.
    func waitForOutput(containing text: String, timeout: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if standardOutput.contains(text) { return true }
            if !process.isRunning {
                try await Task.sleep(for: .milliseconds(100))  // let the pipe drain
                return standardOutput.contains(text)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Waits for the process to exit by itself; kills it after `timeout`. Returns its status.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(15)) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(25)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        try await Task.sleep(for: .milliseconds(100))  // let the pipe readers catch up
        return process.terminationStatus
    }

    /// Runs `<binary> <arguments>` to completion.
    static func run(
        _ arguments: [String], daemon: DaemonProcess, token: String? = nil, binary: URL = ControlProcess.binary
    ) async throws -> (status: Int32?, output: String, errors: String) {
        let ctl = try ControlProcess(arguments, daemon: daemon, token: token, binary: binary)
        let status = try await ctl.waitForExit()
        return (status, ctl.standardOutput, ctl.standardError)
    }
}
