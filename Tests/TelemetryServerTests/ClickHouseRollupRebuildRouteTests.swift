import Foundation
import HummingbirdTesting
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// `POST /v1/stats/rollups/rebuild` on the ClickHouse backend, which keeps no rollups: the
/// caller is told so (409 `no_rollups`), not handed zero rows that read as an empty rebuild.
@Suite(.enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseRollupRebuildRouteTests {
    @Test func aRebuildIsRefusedWithTheReason() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let url = server.urls[0]
        let onClickHouse: @Sendable (inout ServerConfiguration) -> Void = { configuration in
            configuration.backend = .clickhouse
            configuration.clickhouse.urls = [url]
            configuration.clickhouse.database = TestBackend.uniqueDatabase()
            configuration.clickhouse.collectorID = 1
        }
        try await IngestHarness.run(adjust: onClickHouse) { h in
            for uri in ["/v1/stats/rollups/rebuild", "/v1/stats/rollups/rebuild?env=ppe"] {
                let answer = try await h.post(uri, "")
                #expect(answer.status == .conflict, "\(uri): \(answer.body)")
                let error = answer.json["error"] as? [String: Any]
                #expect(error?["code"] as? String == "no_rollups")
                #expect(answer.errorMessage.contains("ClickHouse"))
                #expect(answer.errorMessage.contains("nothing to rebuild"))
            }
        }
    }
}
