import Foundation
import Synchronization

/// Runs a tool to completion and captures its output, for tests that check our files with
/// systemd's own tools (journalctl).
struct ProcessResult {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
    -> ProcessResult
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    // An explicit environment, so the child never reads `environ` while another test
    // changes it with setenv.
    process.environment = environment ?? ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"]
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes before waiting, so a chatty child cannot fill a pipe and stall.
    let errorData = Mutex(Data())
    let errorsRead = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        errorData.withLock { $0 = data }
        errorsRead.signal()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    errorsRead.wait()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus,
        standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
}

/// The repository root, found from this file's path (Tests/SystemdTests/...).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
