import Foundation
import Hummingbird
import TelemetryModel
import TelemetryStore

/// `GET /v1/stats/enrollment|launches|actions|drops`. The first three are computed from the
/// store's record keys, drops from the daemon's drop ledger: all cover history and survive
/// restarts.
struct StatsRoutes: Sendable {
    let store: any RecordStore
    let drops: DropLedger
    let clock: any WallClock

    func register(on api: APIRoutes) {
        let read = api.requiring(.read)
        read.get("/v1/stats/enrollment") { request, _ in
            let p = try StatsParameters.parse(request, now: clock.nowMilliseconds())
            let builder = try await scan(p, into: EnrollmentStatsBuilder(parameters: p)) { $0.add($1) }
            return try Response.json(builder.result())
        }
        read.get("/v1/stats/launches") { request, _ in
            let p = try StatsParameters.parse(request, now: clock.nowMilliseconds())
            let builder = try await scan(
                p, into: CountStatsBuilder(parameters: p, event: EventName.appLaunch, groupedBy: "managementType")) { $0.add($1) }
            return try Response.json(builder.result())
        }
        read.get("/v1/stats/actions") { request, _ in
            let p = try StatsParameters.parse(request, now: clock.nowMilliseconds())
            let builder = try await scan(
                p, into: CountStatsBuilder(parameters: p, event: EventName.intuneAction, groupedBy: "action")) { $0.add($1) }
            return try Response.json(builder.result())
        }
        read.get("/v1/stats/drops") { request, _ in
            let p = try StatsParameters.parse(request, now: clock.nowMilliseconds())
            return try Response.json(DropStats(try await drops.counts(since: p.since, until: p.until, app: p.app), parameters: p))
        }
    }

    /// Runs `add` for every event key in the window; the store visits synchronously from its
    /// own context, so the builder sits behind a lock for the duration of the scan.
    func scan<B: Sendable>(_ p: StatsParameters, into builder: B, _ add: @escaping @Sendable (inout B, RecordKeys) -> Void) async throws -> B {
        let box = LockedBox(builder)
        try await store.scanKeys(kind: .event, env: p.env, since: p.since, until: p.until) { keys in
            box.mutate { add(&$0, keys) }
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
