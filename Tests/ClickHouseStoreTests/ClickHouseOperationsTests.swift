import Foundation
import Logging
import Metrics
import ServiceLifecycle
import StoreCore
import Synchronization
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore
@testable import TelemetryStore

/// The ClickHouse backend's operations against a real private 18.16 server: the shared
/// client outlives the forwarder, `sizes()` counts ClickHouse's parts, and a rollup rebuild
/// is refused by name rather than answered with zero rows.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseOperationsTests {
    /// Stands for a retention pass that is still running when the forwarder has stopped: it
    /// waits for the group's shutdown, then sweeps ClickHouse with the shared client.
    final class RetentionAtShutdown: Service, @unchecked Sendable {
        let retention: ClickHouseRetention
        let started: AsyncStream<Void>.Continuation
        let outcome = Mutex<Result<RetentionResult, any Error>?>(nil)

        init(retention: ClickHouseRetention, started: AsyncStream<Void>.Continuation) {
            self.retention = retention
            self.started = started
        }

        func run() async throws {
            started.yield()
            try? await gracefulShutdown()
            let result: Result<RetentionResult, any Error>
            do {
                result = .success(
                    try await retention.applyRetention(
                        RetentionPolicy().limits(for: .prod), env: .prod, nowMs: SystemWallClock().nowMilliseconds(), returnFreeSpace: false
                    ))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
        }
    }

    @Test func theClientOutlivesTheForwarderAndClosesLast() async throws {
        let f = try await ClickHouseStoreFixture(database: "lifetime", forwarding: false)
        try await f.append([Records.event(app: "com.a", device: "d", time: 1)])
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let probe = RetentionAtShutdown(
            retention: ClickHouseRetention(client: f.client, spool: f.spool, logger: Logger(label: "test")), started: startedContinuation)
        // As the daemon lists them: the client's owner first, so it is stopped last; the
        // forwarder after the pass, so it stops while the pass still has work to do.
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: ClickHouseClientService(client: f.client)), .init(service: probe), .init(service: f.forwarder)],
                logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        for await _ in started { break }
        await group.triggerGracefulShutdown()
        try await running.value

        let outcome = try #require(probe.outcome.withLock { $0 })
        #expect(throws: Never.self) { try outcome.get() }
        // The owner closed the client once every service had returned.
        await #expect(throws: ClickHouseError.self) { _ = try await f.client.serverVersion() }
        await f.close()
    }

    @Test func sizesCountClickHousesActivePartsBesideTheSpool() async throws {
        let clock = SettableClock(1_767_225_600_000)
        var tuning = ClickHouseRecordStore.Tuning()
        tuning.sizesMaxAge = .seconds(30)
        let f = try await ClickHouseStoreFixture(database: "sizes", tuning: tuning, clock: clock, forwarding: false)
        let records = (0..<500).map { Records.event(app: "com.a", device: "dev-\($0 % 7)", time: Int64($0), text: "text \($0)") }
        try await f.append(records)
        try await f.shipNow()
        // One part per partition from here on, so the server's figure holds still while compared.
        _ = try await f.server.query("OPTIMIZE TABLE sizes.records FINAL")
        let parts = try await Self.partBytes(f, database: "sizes")
        #expect(parts > 0)

        let measured = try await f.store.refreshClickHouseSizes()
        #expect(measured.prod == parts)
        #expect(measured.ppe == (try await Self.partBytes(f, database: "sizes_ppe")))
        #expect(f.store.sizes().prod == f.spool.sizes().prod + parts)

        // A measurement younger than the maximum age is reused; an older one is renewed.
        try await f.append(records)
        try await f.shipNow()
        _ = try await f.server.query("OPTIMIZE TABLE sizes.records FINAL")
        #expect(f.store.sizes().prod == f.spool.sizes().prod + parts)
        clock.set(1_767_225_600_000 + 30_000)
        _ = f.store.sizes()
        let grown = try await Self.partBytes(f, database: "sizes")
        #expect(grown > parts)
        var seen = f.store.sizes().prod - f.spool.sizes().prod
        for _ in 0..<200 where seen != grown {
            try await Task.sleep(for: .milliseconds(50))
            seen = f.store.sizes().prod - f.spool.sizes().prod
        }
        #expect(seen == grown)
        await f.close()
    }

    @Test func aRollupRebuildSaysThisBackendKeepsNone() async throws {
        let f = try await ClickHouseStoreFixture(database: "rollups", forwarding: false)
        for env in TelemetryEnvironment.allCases {
            await #expect(throws: RollupsNotKept()) { _ = try await f.store.rebuildRollups(env: env) }
        }
        #expect(StoreFailure.clientDescription(of: RollupsNotKept()).contains("nothing to rebuild"))
        await f.close()
    }

    static func partBytes(_ f: ClickHouseStoreFixture, database: String) async throws -> Int64 {
        let text = try await f.server.query(
            "SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = '\(database)' FORMAT TSV")
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}
