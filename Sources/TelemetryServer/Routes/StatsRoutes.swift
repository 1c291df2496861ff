import Foundation
import Hummingbird
import TelemetryModel
import TelemetryStore

/// `GET /v1/stats/enrollment|launches|actions|drops`. The first three are computed from the
/// store's hourly rollups for whole hours and its record keys for the rest of the window,
/// drops from the daemon's drop ledger: all cover history and survive restarts. An admin
/// recomputes the rollups from the records with `POST /v1/stats/rollups/rebuild`.
struct StatsRoutes: Sendable {
    let store: any RecordStore
    let drops: DropLedger
    let clock: any WallClock

    func register(on api: APIRoutes) {
        let read = api.requiring(.read)
        read.get("/v1/stats/enrollment") { request, _ in
            let p = try StatsParameters.parse(request, now: clock.nowMilliseconds())
            let builder = try await scan(p.eventScan(EventName.enrollmentCall), into: EnrollmentStatsBuilder(parameters: p)) { $0.add($1) }
            return try Response.json(builder.result())
        }
        read.get("/v1/stats/launches") { request, _ in
            let p = try StatsParameters.parse(request, now: clock.nowMilliseconds())
            let builder = try await scan(
                p.eventScan(EventName.appLaunch),
                into: CountStatsBuilder(parameters: p, event: EventName.appLaunch, groupedBy: "managementType")
            ) { $0.add($1) }
            return try Response.json(builder.result())
        }
        read.get("/v1/stats/actions") { request, _ in
            let p = try StatsParameters.parse(request, now: clock.nowMilliseconds())
            let builder = try await scan(
                p.eventScan(EventName.intuneAction),
                into: CountStatsBuilder(parameters: p, event: EventName.intuneAction, groupedBy: "action")
            ) { $0.add($1) }
            return try Response.json(builder.result())
        }
        // Rollups lost or damaged (a restored backup, a bug) are recomputed from the records;
        // the writes go through the store's one writer, so ingest waits, nothing is lost.
        api.requiring(.admin).post("/v1/stats/rollups/rebuild") { request, _ in
            var envs = TelemetryEnvironment.allCases
            if let e = request.uri.queryParameters.get("env"), !e.isEmpty { envs = [try EnvironmentParameter.parse(e)] }
            var rebuilt: [String: RollupRebuildResult] = [:]
            for env in envs { rebuilt[env.rawValue] = try await store.rebuildRollups(env: env) }
            return try Response.json(["rebuilt": rebuilt])
        }
        read.get("/v1/stats/drops") { request, _ in
            let p = try StatsParameters.parse(request, now: clock.nowMilliseconds())
            return try Response.json(DropStats(try await drops.counts(since: p.since, until: p.until, app: p.app), parameters: p))
        }
    }

    /// Runs `add` for every input the store visits (rollup rows of the whole hours, records
    /// elsewhere); the store visits synchronously from its own context, so the builder sits
    /// behind a lock for the duration of the scan.
    func scan<B: Sendable>(_ scan: EventStatsScan, into builder: B, _ add: @escaping @Sendable (inout B, EventStatsInput) -> Void)
        async throws -> B
    {
        let box = LockedBox(builder)
        try await store.eventStats(scan) { input in
            box.mutate { add(&$0, input) }
        }
        return box.value
    }
}

/// A value mutated from a `@Sendable` visitor.
private final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    func mutate(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
    var value: T { lock.withLock { stored } }
}
