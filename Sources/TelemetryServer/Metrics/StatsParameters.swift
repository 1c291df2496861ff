import Hummingbird
import StoreCore
import TelemetryModel

/// The query of a `/v1/stats/...` request: environment, optional app, time window, bucket
/// width and source. Buckets are aligned to multiples of the interval since the epoch (so `1h` buckets
/// start on the hour) and only non-empty buckets are answered.
struct StatsParameters: Sendable {
    var env: TelemetryEnvironment = .prod
    var app: String?
    /// The caller's apps when it is bound to several and named none: inputs of other apps
    /// are left out (`admits`). nil: every app, or just `app`.
    var apps: Set<String>?
    var since: Int64
    var until: Int64
    var interval: Int64
    var intervalText: String
    /// Whether whole hours and minutes may be answered from the rollups (`source=rollups`, the default)
    /// or every record is read (`source=records`: the reference the rollups are checked against).
    var readsRollups = true

    static let defaultWindow: Int64 = 86_400_000

    /// `apps`: the caller's apps (nil: every app). A caller bound to one app gets its stats
    /// without naming it.
    static func parse(_ p: CallerQuery, now: Int64, apps: Set<String>?) throws -> StatsParameters {
        let value = p.value
        let env = try value("env").map(EnvironmentParameter.parse) ?? .prod
        func time(_ name: String, default fallback: Int64) throws -> Int64 {
            guard let text = value(name) else { return fallback }
            return try TimeParameter.parse(name, text, now: now)
        }
        let until = try time("until", default: now)
        let since = try time("since", default: until.saturatingSubtracting(defaultWindow))
        guard since <= until else {
            throw APIError.badRequest("invalid_parameter", "since must not be after until")
        }
        let intervalText = value("interval") ?? "1h"
        guard let interval = parseInterval(intervalText) else {
            throw APIError.badRequest(
                "invalid_parameter", "interval '\(intervalText)' must be a positive duration of at least 1m, like 15m, 1h, 1d or 1w")
        }
        var readsRollups = true
        if let source = value("source") {
            guard source == "rollups" || source == "records" else {
                throw APIError.badRequest("invalid_parameter", "source must be rollups or records, not '\(source)'")
            }
            readsRollups = source == "rollups"
        }
        var app = value("app")
        var several: Set<String>?
        if app == nil, let apps {
            if apps.count == 1 { app = apps.first } else { several = apps }
        }
        return StatsParameters(
            env: env, app: app, apps: several, since: since, until: until, interval: interval, intervalText: intervalText,
            readsRollups: readsRollups)
    }

    /// Whether an input of `appId` belongs in the answer.
    func admits(_ appId: String) -> Bool { apps?.contains(appId) ?? true }

    /// `15m`, `1h`, `1d`, `1w` (also `s`), at least one minute so a day-long window stays readable.
    static func parseInterval(_ text: String) -> Int64? {
        guard let ms = TimeExpression.duration(text), ms >= 60_000 else { return nil }
        return ms
    }

    /// What to ask the store for events named `name`: rollup periods are used when each lies
    /// inside one bucket — hours when the interval is whole hours, else minutes when it is
    /// whole minutes (a `90s` interval reads records).
    func eventScan(_ name: String) -> EventStatsScan {
        EventStatsScan(
            env: env, name: name, since: since, until: until, app: app,
            rollupGrain: readsRollups ? EventRollupGrain.coarsest(within: interval) : nil, bucketMs: interval)
    }

    func bucketStart(_ time: Int64) -> Int64 {
        time.flooredToMultiple(of: interval)
    }

    var window: StatsWindow {
        StatsWindow(
            env: env.rawValue, app: app, since: Timestamp.format(milliseconds: since),
            until: Timestamp.format(milliseconds: until), interval: intervalText)
    }
}

/// The members every stats answer starts with: what was asked.
struct StatsWindow: Encodable {
    var env: String
    var app: String?
    var since: String
    var until: String
    var interval: String
}
