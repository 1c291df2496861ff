import ControlState
import Foundation
import Hummingbird
import Privacy
import StoreCore
import TelemetryModel

/// `GET /v1/stats/enrollment|launches|actions|drops`. The first three are computed from the
/// store's hourly and minute rollups for whole periods and its record keys for the rest of the window,
/// drops from the daemon's drop ledger: all cover history and survive restarts. An admin
/// recomputes the rollups from the records with `POST /v1/stats/rollups/rebuild`. Group keys
/// (operation, management type, action, app) are client strings: shown through the caller's
/// `RecordVisibility`, like a record's text.
struct StatsRoutes: Sendable {
    let store: any RecordStore
    let drops: DropLedger
    let clock: any WallClock
    let pseudonymizer: Pseudonymizer

    func register(on api: APIRoutes) {
        let read = api.requiring(.read, apps: .perApp)
        read.get("/v1/stats/enrollment") { _, context in
            let p = try StatsParameters.parse(context.query, now: clock.nowMilliseconds(), apps: context.readableApps)
            let builder = try await scan(p, EventName.enrollmentCall, into: EnrollmentStatsBuilder(parameters: p)) { $0.add($1) }
            return try Response.json(builder.result(shownAs: visibility(context).text))
        }
        read.get("/v1/stats/launches") { _, context in
            let p = try StatsParameters.parse(context.query, now: clock.nowMilliseconds(), apps: context.readableApps)
            let builder = try await scan(
                p, EventName.appLaunch,
                into: CountStatsBuilder(parameters: p, event: EventName.appLaunch, groupedBy: "managementType")
            ) { $0.add($1) }
            return try Response.json(builder.result(shownAs: visibility(context).text))
        }
        read.get("/v1/stats/actions") { _, context in
            let p = try StatsParameters.parse(context.query, now: clock.nowMilliseconds(), apps: context.readableApps)
            let builder = try await scan(
                p, EventName.intuneAction,
                into: CountStatsBuilder(parameters: p, event: EventName.intuneAction, groupedBy: "action")
            ) { $0.add($1) }
            return try Response.json(builder.result(shownAs: visibility(context).text))
        }
        // Rollups lost or damaged (a restored backup, a bug) are recomputed from the records;
        // the writes go through the store's one writer, so ingest waits, nothing is lost.
        api.requiring(.admin, apps: .none).post("/v1/stats/rollups/rebuild") { _, context in
            var envs = TelemetryEnvironment.allCases
            if let e = context.query.value("env") { envs = [try EnvironmentParameter.parse(e)] }
            var rebuilt: [String: RollupRebuildResult] = [:]
            for env in envs { rebuilt[env.rawValue] = try await store.rebuildRollups(env: env) }
            return try Response.json(["rebuilt": rebuilt])
        }
        read.get("/v1/stats/drops") { _, context in
            let p = try StatsParameters.parse(context.query, now: clock.nowMilliseconds(), apps: context.readableApps)
            let counts = try await drops.counts(since: p.since, until: p.until, app: p.app).filter { p.admits($0.key.appId) }
            return try Response.json(DropStats(counts, parameters: p, shownAs: visibility(context).text))
        }
    }

    func visibility(_ context: AppRequestContext) -> RecordVisibility {
        RecordVisibility(principal: context.principal, pseudonymizer: pseudonymizer)
    }

    /// Runs `add` for every input the store visits for events named `name` (rollup rows of
    /// the whole hours, records elsewhere) that the caller's apps admit; the store visits
    /// synchronously from its own context, so the builder sits behind a lock for the scan.
    func scan<B: Sendable>(
        _ p: StatsParameters, _ name: String, into builder: B, _ add: @escaping @Sendable (inout B, EventStatsInput) -> Void
    ) async throws -> B {
        let box = LockedBox(builder)
        try await store.eventStats(p.eventScan(name)) { input in
            guard p.admits(input.appId) else { return }
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

extension EventStatsInput {
    /// The app the input counts (what a caller's app binding admits or not).
    var appId: String {
        switch self {
        case .record(let keys): keys.appId
        case .counts(let rollup): rollup.appId
        case .durations(let rollup): rollup.appId
        }
    }
}
