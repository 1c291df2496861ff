import ControlState
import TelemetryModel

/// `GET /v1/stats/drops`: records dropped by policy (opted out, duplicate) and rejected as
/// invalid, by reason, kind and app, over the window and per time bucket. Read from the
/// daemon's hourly drop ledger, so it covers history and survives restarts; an hour is the
/// finest grain (a window includes the whole hour its `since` falls in). Drops are counted
/// before records are routed, so they are not split by environment.
struct DropStats: Encodable {
    var window: StatsWindow
    var coverage =
        "hourly counts kept by the daemon (control.sqlite) from the start of the hour 'since' falls in; both environments together (records are counted before they are routed)"
    var dropped: [String: Int]
    var rejected: [String: Int]
    var droppedByKind: [String: [String: Int]]
    var rejectedByKind: [String: [String: Int]]
    /// Dropped records per app and reason ('' is a record that named no app).
    var droppedByApp: [String: [String: Int]]
    var buckets: [Bucket]

    struct Bucket: Encodable {
        var start: String
        /// The window covers only part of this bucket (see `EnrollmentStats.Bucket.partial`).
        var partial: Bool
        var dropped: [String: Int]
        var rejected: [String: Int]
    }

    /// `shown` is how the caller sees a client string (the app ids).
    init(_ counts: [DropKey: Int], parameters p: StatsParameters, shownAs shown: (String) -> String = { $0 }) {
        window = p.window
        var dropped: [String: Int] = [:]
        var rejected: [String: Int] = [:]
        var droppedByKind: [String: [String: Int]] = [:]
        var rejectedByKind: [String: [String: Int]] = [:]
        var droppedByApp: [String: [String: Int]] = [:]
        var buckets: [Int64: Bucket] = [:]
        for (key, n) in counts {
            let start = p.bucketStart(key.hour)
            var bucket =
                buckets[start]
                ?? Bucket(
                    start: Timestamp.format(milliseconds: start), partial: p.isPartial(bucketStart: start), dropped: [:], rejected: [:])
            switch key.outcome {
            case .dropped:
                dropped[key.reason, default: 0] += n
                droppedByKind[key.kind.rawValue, default: [:]][key.reason, default: 0] += n
                droppedByApp[shown(key.appId), default: [:]][key.reason, default: 0] += n
                bucket.dropped[key.reason, default: 0] += n
            case .rejected:
                rejected[key.reason, default: 0] += n
                rejectedByKind[key.kind.rawValue, default: [:]][key.reason, default: 0] += n
                bucket.rejected[key.reason, default: 0] += n
            }
            buckets[start] = bucket
        }
        self.dropped = dropped
        self.rejected = rejected
        self.droppedByKind = droppedByKind
        self.rejectedByKind = rejectedByKind
        self.droppedByApp = droppedByApp
        self.buckets = buckets.keys.sorted().map { buckets[$0]! }
    }
}
