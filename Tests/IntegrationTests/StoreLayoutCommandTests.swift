import Foundation
import TestSupport
import Testing

/// `mamtelemetryd --store-layout` as the benchmarks and an operator run it: beside a running
/// daemon, on its data directory, it prints the records that daemon acknowledged, and it
/// refuses a configuration that has no embedded store.
@Suite struct StoreLayoutCommandTests {
    static func run(_ arguments: [String]) throws -> BundleFleet.Run {
        try BundleFleet.system(DaemonProcess.binary.path, arguments)
    }

    @Test func theLayoutOfARunningDaemonsStoreCountsWhatItAcknowledged() async throws {
        let d = try await CommandLineTests.daemonWithRecords()
        defer { d.cleanUp() }
        let layout = try Self.run(["--data-dir", d.dataDirectory.path, "--store-layout"])
        #expect(layout.status == 0, "\(layout.stderr)")
        let json = parseJSON(Array(layout.stdout.utf8))
        let environments = try #require(json["environments"] as? [[String: Any]])
        let prod = try #require(environments.first { $0["environment"] as? String == "prod" })
        let kinds = try #require(prod["kinds"] as? [[String: Any]])
        #expect(kinds.first { $0["kind"] as? String == "event" }?["records"] as? Int == 3, "\(layout.stdout)")
        #expect(kinds.first { $0["kind"] as? String == "log" }?["records"] as? Int == 2, "\(layout.stdout)")
        #expect((prod["fileBytes"] as? Int ?? 0) > 0)
    }

    @Test func aClickHouseConfigurationIsRefusedWithItsReason() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layout-ch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let refused = try Self.run([
            "--data-dir", directory.path, "--store-backend", "clickhouse", "--clickhouse-url", "http://127.0.0.1:9", "--collector-id", "1",
            "--store-layout",
        ])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("--store-layout reads the embedded store"), "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)
    }
}
