public import TelemetryModel

/// Which events are rolled up, and into what time buckets. Only the names the stats read get
/// rollups: other names may carry any `detail`, and rows for them would grow without bound.
public enum EventRollupScope {
    public static let names: Set<String> = [EventName.appLaunch, EventName.enrollmentCall, EventName.intuneAction]
    public static let hourMs: Int64 = 3_600_000
    public static let minuteMs: Int64 = 60_000
    /// How far back of the newest expiry pass the minute rollups reach, in event time: two
    /// days, so "the last 24 hours" with minute edges is answered from rollups all day, and a
    /// day of late events still lands in kept minutes. Older minutes are answered from the
    /// hourly rollups and the records, as before minute rollups existed.
    public static let minutesKeptMs: Int64 = 48 * hourMs

    /// The start of the hour holding `time` (floor, also before 1970).
    public static func hour(of time: Int64) -> Int64 { time.flooredToMultiple(of: hourMs) }

    /// The start of the minute holding `time` (floor, also before 1970).
    public static func minute(of time: Int64) -> Int64 { time.flooredToMultiple(of: minuteMs) }

    /// The starts of the hours lying wholly inside `since...until`, nil when there are none.
    public static func wholeHours(since: Int64, until: Int64) -> Range<Int64>? {
        EventRollupGrain.hour.wholePeriods(since: since, until: until)
    }
}

/// The periods rollups are kept for: every hour (as long as `rollupsMaxAge`), and every
/// minute of the last ``EventRollupScope/minutesKeptMs``, so a window's edges need no scan.
public enum EventRollupGrain: Sendable, Hashable, CaseIterable {
    case hour
    case minute

    public var milliseconds: Int64 {
        switch self {
        case .hour: EventRollupScope.hourMs
        case .minute: EventRollupScope.minuteMs
        }
    }

    /// The start of the period holding `time` (floor, also before 1970).
    public func start(of time: Int64) -> Int64 { time.flooredToMultiple(of: milliseconds) }

    /// The starts of the periods lying wholly inside `since...until`, nil when there are none.
    public func wholePeriods(since: Int64, until: Int64) -> Range<Int64>? {
        let first = since == start(of: since) ? since : start(of: since).saturatingAdding(milliseconds)
        let end = until == Int64.max ? start(of: until) : start(of: until + 1)
        return first < end ? first..<end : nil
    }

    /// The coarsest grain whose periods each lie inside one answer bucket of `bucketMs`
    /// (buckets aligned to multiples of it since the epoch); nil when even a minute may
    /// straddle two buckets.
    public static func coarsest(within bucketMs: Int64) -> EventRollupGrain? {
        allCases.first { bucketMs > 0 && bucketMs % $0.milliseconds == 0 }
    }
}

/// One row of the count rollup: events of one name, app, detail (operation, management type,
/// action), status code and reported outcome within one period (an hour, a minute, or on a
/// backend that aggregates at read time, an answer bucket).
public struct EventRollup: Sendable, Hashable {
    /// The start of the row's period.
    public var start: Int64
    public var name: String
    public var appId: String
    public var detail: String
    public var statusCode: Int?
    /// The event's own `didSucceed`, as stored (stats derive success from the status code when nil).
    public var succeeded: Bool?
    public var count: Int

    public init(start: Int64, name: String, appId: String, detail: String, statusCode: Int?, succeeded: Bool?, count: Int) {
        self.start = start
        self.name = name
        self.appId = appId
        self.detail = detail
        self.statusCode = statusCode
        self.succeeded = succeeded
        self.count = count
    }
}

/// The durations of the events of one name, app and detail within one period (as
/// ``EventRollup``). Kept apart from the counts: percentiles are answered per operation, never
/// per status code, so the sketch is not split (and stored) once per status code.
public struct EventLatencyRollup: Sendable, Hashable {
    /// The start of the row's period.
    public var start: Int64
    public var name: String
    public var appId: String
    public var detail: String
    public var durations: LatencySketch

    public init(start: Int64, name: String, appId: String, detail: String, durations: LatencySketch) {
        self.start = start
        self.name = name
        self.appId = appId
        self.detail = detail
        self.durations = durations
    }
}

/// What a stats read asks the store for: events named `name` in `since...until` (inclusive),
/// optionally of one app. With a `rollupGrain`, the store answers every period of that grain
/// (and every kept minute) lying wholly inside the window from rollups, and only the rest
/// from the records' keys (see ``EventStatsPlan``).
public struct EventStatsScan: Sendable, Hashable {
    public var env: TelemetryEnvironment
    public var name: String
    public var since: Int64
    public var until: Int64
    public var app: String?
    /// The coarsest rollup period the caller can bucket whole (``EventRollupGrain/coarsest(within:)``
    /// of `bucketMs`); nil reads records only.
    public var rollupGrain: EventRollupGrain?
    /// The width of the answer's time buckets (aligned to multiples of it since the epoch): a
    /// store that aggregates at read time (ClickHouse) groups by it; the embedded store
    /// hands out rollup rows and record keys, which the caller buckets.
    public var bucketMs: Int64

    public init(
        env: TelemetryEnvironment, name: String, since: Int64, until: Int64, app: String?, rollupGrain: EventRollupGrain?,
        bucketMs: Int64 = EventRollupScope.hourMs
    ) {
        precondition(
            rollupGrain.map { bucketMs % $0.milliseconds == 0 } ?? true, "a rollup period must lie inside one answer bucket")
        self.env = env
        self.name = name
        self.since = since
        self.until = until
        self.app = app
        self.rollupGrain = rollupGrain
        self.bucketMs = bucketMs
    }
}

/// One input of a stats computation, in the order the store visits them.
public enum EventStatsInput: Sendable {
    /// One stored event outside the periods answered from rollups.
    case record(RecordKeys)
    case counts(EventRollup)
    case durations(EventLatencyRollup)
}

/// What a rollup rebuild wrote for one environment.
public struct RollupRebuildResult: Sendable, Hashable, Codable {
    public var records = 0
    /// Hourly rows.
    public var countRows = 0
    public var latencyRows = 0
    /// Minute rows (of the kept minutes only).
    public var minuteCountRows = 0
    public var minuteLatencyRows = 0

    public init(records: Int = 0, countRows: Int = 0, latencyRows: Int = 0, minuteCountRows: Int = 0, minuteLatencyRows: Int = 0) {
        self.records = records
        self.countRows = countRows
        self.latencyRows = latencyRows
        self.minuteCountRows = minuteCountRows
        self.minuteLatencyRows = minuteLatencyRows
    }
}
