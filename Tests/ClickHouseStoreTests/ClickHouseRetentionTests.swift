import ClickHouseStore
import Foundation
import Logging
import Metrics
import StoreCore
import TelemetryModel
import TelemetryStore
import TestSupport
import Testing

/// Retention on the ClickHouse backend against two real 18.16 shards: whole partitions past
/// their class's age are dropped on every shard, younger ones stay, and the spool is not aged.
@Suite(.enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseRetentionTests {
    static let day: Int64 = 86_400_000

    @Test func dropsExpiredPartitionsOnEveryShardAndNeverAgesTheSpool() async throws {
        let server = try PrivateClickHouse(shards: 2)
        defer { server.destroy() }
        let client = ClickHouseClient(configuration: .init(endpoints: server.urls, database: "ret", cluster: server.cluster))
        defer { Task { try? await client.shutdown() } }
        try await ClickHouseMigrator(client: client).migrate()
        let now = SystemWallClock().nowMilliseconds()
        // (class, level, receive age): with the default production policy, events keep 30
        // days, logs 14, verbose logs 3.
        let rows: [(String, String, String, Int64)] = [
            ("event", "events", "NULL", 40 * Self.day),  // past its limit by 10 days: dropped
            ("event", "events", "NULL", 28 * Self.day),  // within it: kept
            ("event", "events", "NULL", 0),
            ("log", "verboseLogs", "'verbose'", 5 * Self.day),  // verbose, past 3 days: dropped
            ("log", "logs", "'info'", 5 * Self.day),  // the same day's other logs: kept
        ]
        for (shard, url) in server.urls.enumerated() {
            for (n, row) in rows.enumerated() {
                _ = try await server.query(
                    """
                    INSERT INTO ret.records_local (id, collector, kind, receivedAt, time, app, retentionClass, level, raw)
                    VALUES (\(n), \(shard), '\(row.0)', \(now - row.3), \(now - row.3), 'com.a', '\(row.1)', \(row.2), '{}')
                    """, url: url)
            }
            _ = try await server.query(
                "INSERT INTO ret.incidents_local (id, guid, app, createdAt, recordCount, collector) VALUES ('old', 'g', 'com.a', \(now - 100 * Self.day), 1, \(shard)), ('new', 'g2', 'com.a', \(now), 1, \(shard))",
                url: url)
        }
        // An acknowledged record whose ClickHouse has been unreachable for 40 days.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let spool = try SQLiteRecordStore(directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let committer = Task { try await spool.committer.run() }
        let json = Array(#"{"name":"AppLaunch","appId":"com.a","deviceId":"d"}"#.utf8)
        _ = try await spool.append(
            [
                DecodedRecord(
                    json: json, keys: RecordKeys(time: now, appId: "com.a", deviceId: "d", name: "AppLaunch"), flags: .unspecified,
                    eventId: nil)
            ],
            kind: .event, env: .prod, receivedAt: now - 40 * Self.day, incident: nil)

        let retention = ClickHouseRetention(client: client, spool: spool, logger: Logger(label: "test"))
        let service = RetentionService(
            store: retention, policy: RetentionPolicy(), logger: Logger(label: "test"), clock: SystemWallClock(),
            metrics: NOOPMetricsHandler.instance)
        let result = try await service.sweep()
        // Per shard: the 40-day events, the 5-day verbose logs and the old incidents' month.
        #expect(result[.prod]?.batches == 6)
        #expect(result[.prod]?.records == 6)
        for url in server.urls {
            let left = try await server.query(
                "SELECT retentionClass, count() FROM ret.records_local GROUP BY retentionClass ORDER BY retentionClass FORMAT TSV", url: url
            )
            #expect(left == "logs\t1\nevents\t2\n")
            #expect(try await server.query("SELECT id FROM ret.incidents_local FORMAT TSV", url: url) == "new\n")
        }
        // The spool still holds its record: only shipping removes it.
        #expect(try await spool.depth(env: .prod).records == 1)
        // A second pass finds nothing more to drop.
        #expect(try await service.sweep()[.prod]?.batches == 0)
        await spool.committer.close()
        committer.cancel()
    }
}
