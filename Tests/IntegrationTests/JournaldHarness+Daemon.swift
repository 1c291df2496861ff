import Foundation

extension JournaldHarness {
    /// Starts the built daemon inside the harness on `daemon`'s port and data directory, its
    /// output appended to `daemon.logFile`; returns the harness process at once (wait with
    /// `JournaldMirrorTests.waitUntilReady`, stop with `JournaldMirrorTests.stop`).
    func launch(_ daemon: DaemonProcess) throws -> Process {
        _ = FileManager.default.createFile(atPath: daemon.logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: daemon.logFile)
        return try launch(
            DaemonProcess.binary.path, ["--data-dir", daemon.dataDirectory.path, "--listen", "127.0.0.1:\(daemon.port)"],
            standardOutput: log, standardError: log)
    }
}
