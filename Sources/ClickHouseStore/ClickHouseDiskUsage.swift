import Foundation
import Synchronization
import TelemetryModel

/// ClickHouse's bytes on disk per environment: the active parts of this backend's own tables
/// in `system.parts`, summed over every endpoint this collector knows (with a cluster, each
/// holds its own shard's local tables; the `Distributed` ones hold nothing).
///
/// ``ClickHouseRecordStore/sizes()`` answers synchronously (at every metrics scrape), so it
/// reads the last measurement; a read finding it older than `maxAge` starts one new
/// measurement in the background. Until the first one succeeds ClickHouse counts as 0 bytes.
final class ClickHouseDiskUsage: Sendable {
    private struct State {
        var bytes = PerEnvironment<Int64>(prod: 0, ppe: 0)
        var measuredAt: Int64?
        var measuring = false
    }

    let client: ClickHouseClient
    let clock: any WallClock
    let maxAge: Duration
    private let state = Mutex(State())

    init(client: ClickHouseClient, clock: any WallClock, maxAge: Duration) {
        self.client = client
        self.clock = clock
        self.maxAge = maxAge
    }

    /// The last measurement; starts a new one when it is older than `maxAge` (or missing)
    /// and none is under way.
    func latest() -> PerEnvironment<Int64> {
        let now = clock.nowMilliseconds()
        let maxAgeMs = Int64(maxAge / .milliseconds(1))
        let (bytes, start) = state.withLock { s -> (PerEnvironment<Int64>, Bool) in
            let stale = s.measuredAt.map { now - $0 >= maxAgeMs } ?? true
            guard stale, !s.measuring else { return (s.bytes, false) }
            s.measuring = true
            return (s.bytes, true)
        }
        if start {
            Task {
                // A failed measurement keeps the last one; the next stale read tries again.
                _ = try? await self.refresh()
                self.state.withLock { $0.measuring = false }
            }
        }
        return bytes
    }

    /// Measures now and keeps the answer.
    @discardableResult
    func refresh() async throws -> PerEnvironment<Int64> {
        let bytes = try await measure()
        let now = clock.nowMilliseconds()
        state.withLock {
            $0.bytes = bytes
            $0.measuredAt = now
        }
        return bytes
    }

    func measure() async throws -> PerEnvironment<Int64> {
        let configuration = client.configuration
        let schemas = PerEnvironment {
            ClickHouseSchema(database: ClickHouseMigrator.database(configuration.database, env: $0), cluster: configuration.cluster)
        }
        var bytes = PerEnvironment<Int64>(prod: 0, ppe: 0)
        for endpoint in configuration.endpoints {
            let answer = try await client.execute(
                """
                SELECT database, sum(bytes_on_disk) FROM system.parts
                WHERE active AND database IN (\(schemas.prod.database), \(schemas.ppe.database))
                  AND table IN (\(schemas.prod.recordsStorage), \(schemas.prod.incidentsStorage), 'schema_migrations')
                GROUP BY database FORMAT TabSeparated
                """, on: endpoint)
            for row in try TabSeparatedRows(answer, columns: 2).rows {
                let database = TabSeparatedRows.string(row[0])
                let size = try TabSeparatedRows.int(row[1])
                for env in TelemetryEnvironment.allCases where schemas[env].database == database {
                    bytes[env] = bytes[env].saturatingAdding(size)
                }
            }
        }
        return bytes
    }
}
