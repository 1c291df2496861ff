import ControlState
import StoreCore
import TelemetryModel

/// `GET /v1/stats/apps`: the support lead's table, one row per app — every app of the
/// registry and every app that sent events in the window or the period before it. Each rate
/// stands beside its volume (a 100% failure rate from one call reads as one call), each
/// figure beside the previous period of the same length, and each status code with the
/// distinct devices and users it reached.
struct AppFleetStats: Encodable {
    var window: Period
    var previousWindow: Period
    var apps: [AppRow]
    /// Distinct devices and users past the tracking cap were not counted (lower bounds).
    var reachTruncated: Bool

    struct Period: Encodable {
        var env: String
        var since: String
        var until: String
    }

    struct AppRow: Encodable {
        var appId: String
        /// In the app registry (imported from its Info.plist, the API or the config file).
        var registered: Bool
        var flags: AppFlags?
        var enrollment: Enrollment
        var launches: Launches
    }

    struct Enrollment: Encodable {
        var calls: Int
        var succeeded: Int
        var failed: Int
        /// failed / (succeeded + failed); nil without a call that reported an outcome.
        var failureRate: Double?
        var devicesFailing: Int
        var usersFailing: Int
        var previous: Previous
        var change: Change
        var statusCodes: [StatusCodeRow]
    }

    struct Previous: Encodable {
        var calls: Int
        var failed: Int
        var failureRate: Double?
    }

    struct Change: Encodable {
        /// Relative change of the number of calls (0.25 = 25% more); nil when there were none before.
        var calls: Double?
        /// Difference of the failure rates (0.05 = five percentage points worse); nil unless both exist.
        var failureRate: Double?
    }

    struct StatusCodeRow: Encodable {
        /// nil: the calls carried no status code.
        var statusCode: Int?
        var name: String?
        /// The code's class (1xx succeed); nil without a code.
        var success: Bool?
        var calls: Int
        /// calls / all the app's calls in the window.
        var share: Double
        var devices: Int
        var users: Int
        var previousCalls: Int
    }

    struct Launches: Encodable {
        var count: Int
        var previous: Int
        /// Relative change (−0.5 = half as many); nil when there were none before.
        var change: Double?
    }
}

/// Per-app counts from what an event stats scan visits (rollup rows and record keys).
struct AppCounts: Sendable {
    struct Enrollment: Sendable {
        var calls = 0
        var succeeded = 0
        var failed = 0
        var byCode: [Int?: Int] = [:]
    }

    var enrollment: [String: Enrollment] = [:]
    var launches: [String: Int] = [:]
    let since: Int64
    let until: Int64
    let app: String?

    init(since: Int64, until: Int64, app: String?) {
        self.since = since
        self.until = until
        self.app = app
    }

    mutating func add(_ input: EventStatsInput) {
        switch input {
        case .record(let k):
            guard k.time >= since, k.time <= until, app == nil || k.appId == app else { return }
            add(name: k.name, app: k.appId, statusCode: k.statusCode, succeeded: k.succeeded, count: 1)
        case .counts(let row):
            guard app == nil || row.appId == app else { return }
            add(name: row.name, app: row.appId, statusCode: row.statusCode, succeeded: row.succeeded, count: row.count)
        case .durations: break
        }
    }

    private mutating func add(name: String, app: String, statusCode: Int?, succeeded: Bool?, count: Int) {
        switch name {
        case EventName.appLaunch: launches[app, default: 0] += count
        case EventName.enrollmentCall:
            var e = enrollment[app] ?? Enrollment()
            e.calls += count
            e.byCode[statusCode, default: 0] += count
            switch succeeded ?? statusCode.map(EnrollmentStatus.isSuccess) {
            case true?: e.succeeded += count
            case false?: e.failed += count
            case nil: break
            }
            enrollment[app] = e
        default: break
        }
    }
}

extension AppFleetStats {
    init(
        current: AppCounts, previous: AppCounts, reach: EnrollmentReach, registry: [AppRegistry.Entry], window: Period,
        previousWindow: Period, shown: (String) -> String
    ) {
        func rate(_ failed: Int, _ succeeded: Int) -> Double? { failed + succeeded > 0 ? Double(failed) / Double(failed + succeeded) : nil }
        func relative(_ now: Int, _ before: Int) -> Double? { before > 0 ? Double(now - before) / Double(before) : nil }
        let registered = Dictionary(registry.map { ($0.appId, $0.flags) }, uniquingKeysWith: { a, _ in a })
        let apps = Set(registered.keys).union(current.enrollment.keys).union(current.launches.keys)
            .union(previous.enrollment.keys).union(previous.launches.keys)
        var rows: [AppRow] = []
        for app in apps {
            let now = current.enrollment[app] ?? .init()
            let before = previous.enrollment[app] ?? .init()
            let failing = reach.failingByApp[app] ?? .init(devices: 0, users: 0)
            let codes = Set(now.byCode.keys).union(before.byCode.keys).map { code -> StatusCodeRow in
                let r = reach.byCode[.init(app: app, statusCode: code)] ?? .init(devices: 0, users: 0)
                let calls = now.byCode[code] ?? 0
                return StatusCodeRow(
                    statusCode: code, name: code.flatMap(EnrollmentStatus.name(of:)), success: code.map(EnrollmentStatus.isSuccess),
                    calls: calls, share: now.calls > 0 ? Double(calls) / Double(now.calls) : 0, devices: r.devices, users: r.users,
                    previousCalls: before.byCode[code] ?? 0)
            }.sorted { a, b in a.calls != b.calls ? a.calls > b.calls : (a.statusCode ?? -1) < (b.statusCode ?? -1) }
            let nowRate = rate(now.failed, now.succeeded)
            let beforeRate = rate(before.failed, before.succeeded)
            rows.append(
                AppRow(
                    appId: shown(app), registered: registered[app] != nil, flags: registered[app],
                    enrollment: Enrollment(
                        calls: now.calls, succeeded: now.succeeded, failed: now.failed, failureRate: nowRate,
                        devicesFailing: failing.devices, usersFailing: failing.users,
                        previous: Previous(calls: before.calls, failed: before.failed, failureRate: beforeRate),
                        change: Change(
                            calls: relative(now.calls, before.calls), failureRate: nowRate.flatMap { n in beforeRate.map { n - $0 } }),
                        statusCodes: codes),
                    launches: Launches(
                        count: current.launches[app] ?? 0, previous: previous.launches[app] ?? 0,
                        change: relative(current.launches[app] ?? 0, previous.launches[app] ?? 0))))
        }
        // The apps in most trouble first: failed calls, then calls, then name.
        rows.sort { a, b in
            (a.enrollment.failed, a.enrollment.calls) != (b.enrollment.failed, b.enrollment.calls)
                ? (a.enrollment.failed, a.enrollment.calls) > (b.enrollment.failed, b.enrollment.calls) : a.appId < b.appId
        }
        self.init(window: window, previousWindow: previousWindow, apps: rows, reachTruncated: reach.truncated)
    }
}
