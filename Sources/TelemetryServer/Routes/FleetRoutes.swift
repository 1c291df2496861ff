import ControlState
import Hummingbird
import Privacy
import StoreCore
import Synchronization
import TelemetryModel

/// `GET /v1/stats/apps`: the per-app table of a support lead's fleet page and the list of
/// apps to pick from (the registry's and every app seen), over a window (default the last
/// 24 h) compared with the period of the same length before it. Counts come from the hourly
/// and minute rollups where periods are whole (as `/v1/stats/*`); distinct devices and users per status
/// code from the window's records (retention limits them to what is kept).
struct FleetRoutes: Sendable {
    let store: any RecordStore
    let registry: AppRegistry
    let clock: any WallClock
    let pseudonymizer: Pseudonymizer

    func register(on api: APIRoutes) {
        api.requiring(.read, apps: .perApp).get("/v1/stats/apps") { _, context in
            let p = try StatsParameters.parse(context.query, now: clock.nowMilliseconds(), apps: context.readableApps)
            let length = p.until.saturatingSubtracting(p.since).saturatingAdding(1)
            var before = p
            before.until = p.since.saturatingSubtracting(1)
            before.since = p.since.saturatingSubtracting(length)
            let current = try await counts(p)
            let previous = try await counts(before)
            var reach = try await store.enrollmentReach(env: p.env, since: p.since, until: p.until, app: p.app)
            reach.byCode = reach.byCode.filter { p.admits($0.key.app) }
            reach.failingByApp = reach.failingByApp.filter { p.admits($0.key) }
            let visibility = RecordVisibility(principal: context.principal, pseudonymizer: pseudonymizer)
            let entries = registry.all().filter { (p.app == nil || $0.appId == p.app) && p.admits($0.appId) }
            func period(_ q: StatsParameters) -> AppFleetStats.Period {
                .init(env: q.env.rawValue, since: Timestamp.format(milliseconds: q.since), until: Timestamp.format(milliseconds: q.until))
            }
            return try Response.json(
                AppFleetStats(
                    current: current, previous: previous, reach: reach, registry: entries, window: period(p),
                    previousWindow: period(before),
                    shown: visibility.clientString))
        }
    }

    /// Launches and enrollment calls per app over `p`'s window.
    func counts(_ p: StatsParameters) async throws -> AppCounts {
        let box = Mutex(AppCounts(since: p.since, until: p.until, app: p.app))
        for name in [EventName.appLaunch, EventName.enrollmentCall] {
            try await store.eventStats(p.eventScan(name)) { input in
                guard p.admits(input.appId) else { return }
                box.withLock { $0.add(input) }
            }
        }
        return box.withLock { $0 }
    }
}
