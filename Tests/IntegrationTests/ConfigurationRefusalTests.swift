import Foundation
import TestSupport
import Testing

/// A misspelt option, environment variable or YAML key stops the built daemon with
/// EX_CONFIG (78), naming the key and the nearest real one, instead of starting with the
/// setting silently ignored.
@Suite struct ConfigurationRefusalTests {
    struct Exit {
        var status: Int32
        var errors: String
    }

    /// Runs the daemon with its own data directory and waits (bounded) for it
    /// to exit by itself. A daemon that starts instead is killed, and the test fails on its status.
    static func runDaemon(_ arguments: [String], environment: [String: String] = [:]) async throws -> Exit {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MAMTELEMETRY") }
        env.removeValue(forKey: "NOTIFY_SOCKET")
        for (k, v) in environment { env[k] = v }
        let errors = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let log = try FileHandle(forWritingTo: errors)
        defer { try? log.close() }
        // Port 0: a daemon that wrongly starts binds whatever is free.
        let p = try ChildProcess(
            DaemonProcess.binary.path, ["--data-dir", directory.path, "--listen", "127.0.0.1:0"] + arguments, environment: env,
            standardError: log.fileDescriptor)
        let deadline = ContinuousClock.now + .seconds(10)
        while p.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if p.isRunning {
            p.signal(SIGKILL)
            while p.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        }
        return Exit(status: p.terminationStatus, errors: try String(contentsOf: errors, encoding: .utf8))
    }

    @Test func unknownFlagStopsWithTheNearestFlagSuggested() async throws {
        let exit = try await Self.runDaemon(["--retention-prod-max-byts", "5"])
        #expect(exit.status == 78, "\(exit.errors)")
        #expect(exit.errors.contains("'--retention-prod-max-byts'"), "\(exit.errors)")
        #expect(exit.errors.contains("did you mean '--retention-prod-max-bytes'?"), "\(exit.errors)")
    }

    @Test func unknownFlagWithEqualsValueIsNamedWithoutIt() async throws {
        let exit = try await Self.runDaemon(["--limits-max-body-byte=2048"])
        #expect(exit.status == 78)
        #expect(exit.errors.contains("'--limits-max-body-byte'; did you mean '--limits-max-body-bytes'?"), "\(exit.errors)")
    }

    @Test func unknownEnvironmentVariableStopsWithTheNearestSuggested() async throws {
        let exit = try await Self.runDaemon([], environment: ["MAMTELEMETRY_RETENTION_PROD_MAX_BYTS": "5"])
        #expect(exit.status == 78, "\(exit.errors)")
        #expect(exit.errors.contains("environment variable 'MAMTELEMETRY_RETENTION_PROD_MAX_BYTS'"), "\(exit.errors)")
        #expect(exit.errors.contains("did you mean 'MAMTELEMETRY_RETENTION_PROD_MAX_BYTES'?"), "\(exit.errors)")
    }

    @Test func unknownYAMLKeyStopsWithTheNearestSuggested() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: file) }
        try "logLevel: info\nretention:\n  prod:\n    eventsDays: 30\n    maxByts: 5\n".write(to: file, atomically: true, encoding: .utf8)
        let exit = try await Self.runDaemon(["--config", file.path])
        #expect(exit.status == 78, "\(exit.errors)")
        #expect(exit.errors.contains("'retention.prod.maxByts'"), "\(exit.errors)")
        #expect(exit.errors.contains("did you mean 'retention.prod.maxBytes'?"), "\(exit.errors)")
    }

    /// The shipped file, with its commented-out keys and sections, and the client's own
    /// variables in the environment, still start the daemon.
    @Test func shippedConfigAndClientVariablesAreAccepted() async throws {
        let shipped = DaemonProcess.packageRoot.appendingPathComponent("packaging/config.yaml").path
        let d = try DaemonProcess(
            // The disk thresholds are the file's only values a small test filesystem could fail.
            extraArguments: [
                "--config", shipped, "--disk-min-free-bytes", "0", "--disk-min-free-ratio", "0", "--disk-keep-free-bytes", "0",
            ],
            environment: ["MAMTELEMETRY_URL": "http://127.0.0.1:1", "MAMTELEMETRY_TOKEN": "not-a-token"])
        defer { d.cleanUp() }
        try await d.start()
        #expect(try await d.get("/readyz").0 == 200)
    }
}
