import Foundation
import TestSupport
import Testing

/// `mamtelemetryd --store-layout` as the benchmarks and an operator run it: beside a running
/// daemon, on its data directory, it prints the records that daemon acknowledged, and it
/// refuses a configuration that has no embedded store.
@Suite struct StoreLayoutCommandTests {
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let p = Process()
        p.executableURL = DaemonProcess.binary
        p.arguments = arguments
        p.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MAMTELEMETRY") }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("layout-out-\(UUID().uuidString)")
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
        return (p.terminationStatus, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
    }

    @Test func theLayoutOfARunningDaemonsStoreCountsWhatItAcknowledged() async throws {
        let d = try await CommandLineTests.daemonWithRecords()
        defer { d.cleanUp() }
        let layout = try Self.run(["--data-dir", d.dataDirectory.path, "--store-layout"])
        #expect(layout.status == 0, "\(layout.errors)")
        let json = parseJSON(Array(layout.output.utf8))
        let environments = try #require(json["environments"] as? [[String: Any]])
        let prod = try #require(environments.first { $0["environment"] as? String == "prod" })
        let kinds = try #require(prod["kinds"] as? [[String: Any]])
        #expect(kinds.first { $0["kind"] as? String == "event" }?["records"] as? Int == 3, "\(layout.output)")
        #expect(kinds.first { $0["kind"] as? String == "log" }?["records"] as? Int == 2, "\(layout.output)")
        #expect((prod["fileBytes"] as? Int ?? 0) > 0)
    }

    @Test func aClickHouseConfigurationIsRefusedWithItsReason() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layout-ch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let refused = try Self.run([
            "--data-dir", directory.path, "--store-backend", "clickhouse", "--clickhouse-url", "http://127.0.0.1:9", "--collector-id", "1",
            "--store-layout",
        ])
        #expect(refused.status == 64, "\(refused.errors)")
        #expect(refused.errors.contains("--store-layout reads the embedded store"), "\(refused.errors)")
        #expect(refused.output.isEmpty)
    }
}
