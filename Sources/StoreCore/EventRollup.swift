public import TelemetryModel

/// Which events are rolled up, and into what time buckets. Only the names the stats read get
/// rollups: other names may carry any `detail`, and rows for them would grow without bound.
public enum EventRollupScope {
    public static let names: Set<String> = [EventName.appLaunch, EventName.enrollmentCall, EventName.intuneAction]
    public static let hourMs: Int64 = 3_600_000

    /// The start of the hour holding `time` (floor, also before 1970).
    public static func hour(of time: Int64) -> Int64 { time.flooredToMultiple(of: hourMs) }

    /// The starts of the hours lying wholly inside `since...until`, nil when there are none.
    public static func wholeHours(since: Int64, until: Int64) -> Range<Int64>? {
        let first = since == hour(of: since) ? since : hour(of: since).saturatingAdding(hourMs)
        let end = until == Int64.max ? hour(of: until) : hour(of: until + 1)
        return first < end ? first..<end : nil
    }
}

/// One row of the count rollup: events of one name, app, detail (operation, management type,
/// action), status code and reported outcome within one hour.
public struct EventRollup: Sendable, Hashable {
    public var hour: Int64
    public var name: String
    public var appId: String
    public var detail: String
    public var statusCode: Int?
    /// The event's own `didSucceed`, as stored (stats derive success from the status code when nil).
    public var succeeded: Bool?
    public var count: Int

    public init(hour: Int64, name: String, appId: String, detail: String, statusCode: Int?, succeeded: Bool?, count: Int) {
        self.hour = hour
        self.name = name
        self.appId = appId
        self.detail = detail
        self.statusCode = statusCode
        self.succeeded = succeeded
        self.count = count
    }
}

/// The durations of the events of one name, app and detail within one hour. Kept apart from
/// the counts: percentiles are answered per operation, never per status code, so the sketch
/// is not split (and stored) once per status code.
public struct EventLatencyRollup: Sendable, Hashable {
    public var hour: Int64
    public var name: String
    public var appId: String
    public var detail: String
    public var durations: LatencySketch

    public init(hour: Int64, name: String, appId: String, detail: String, durations: LatencySketch) {
        self.hour = hour
        self.name = name
        self.appId = appId
        self.detail = detail
        self.durations = durations
    }
}

/// What a stats read asks the store for: events named `name` in `since...until` (inclusive),
/// optionally of one app. The hours in `rollupHours` are answered from rollups; every other
/// part of the window from the records' keys.
public struct EventStatsScan: Sendable, Hashable {
    public var env: TelemetryEnvironment
    public var name: String
    public var since: Int64
    public var until: Int64
    public var app: String?
    /// Hour starts whose whole hour lies inside the window; nil reads records only.
    public var rollupHours: Range<Int64>?
    /// The width of the answer's time buckets (aligned to multiples of it since the epoch): a
    /// store that aggregates at read time (ClickHouse) groups by it; the embedded store
    /// hands out hourly rollups and record keys, which the caller buckets.
    public var bucketMs: Int64

    public init(
        env: TelemetryEnvironment, name: String, since: Int64, until: Int64, app: String?, rollupHours: Range<Int64>?,
        bucketMs: Int64 = EventRollupScope.hourMs
    ) {
        precondition(
            rollupHours.map { $0.lowerBound >= since && $0.upperBound - 1 <= until } ?? true,
            "rollup hours must lie inside the window")
        self.env = env
        self.name = name
        self.since = since
        self.until = until
        self.app = app
        self.rollupHours = rollupHours
        self.bucketMs = bucketMs
    }
}

/// One input of a stats computation, in the order the store visits them.
public enum EventStatsInput: Sendable {
    /// One stored event outside the rollup hours.
    case record(RecordKeys)
    case counts(EventRollup)
    case durations(EventLatencyRollup)
}

/// What a rollup rebuild wrote for one environment.
public struct RollupRebuildResult: Sendable, Hashable, Codable {
    public var records = 0
    public var countRows = 0
    public var latencyRows = 0

    public init(records: Int = 0, countRows: Int = 0, latencyRows: Int = 0) {
        self.records = records
        self.countRows = countRows
        self.latencyRows = latencyRows
    }
}
