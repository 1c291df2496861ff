import StoreCore
import TelemetryModel

/// `GET /v1/stats/launches` and `/v1/stats/actions`: event counts split by one dimension
/// (management type, action), over the window and per time bucket.
struct CountStats: Encodable {
    var window: StatsWindow
    var event: String
    /// What `counts` is keyed by: `managementType` or `action`.
    var groupedBy: String
    var total: Int
    var counts: [String: Int]
    var buckets: [Bucket]

    struct Bucket: Encodable {
        var start: String
        /// The window covers only part of this bucket (see `EnrollmentStats.Bucket.partial`).
        var partial: Bool
        var total: Int
        var counts: [String: Int]
    }
}

struct CountStatsBuilder {
    let parameters: StatsParameters
    let event: String
    let groupedBy: String
    var total = 0
    var counts: [String: Int] = [:]
    var buckets: [Int64: [String: Int]] = [:]

    mutating func add(_ input: EventStatsInput) {
        switch input {
        case .record(let k):
            guard k.name == event, parameters.includes(k) else { return }
            add(k.detail, at: k.time, count: 1)
        case .counts(let row): add(row.detail, at: row.start, count: row.count)
        case .durations: break
        }
    }

    private mutating func add(_ detail: String, at time: Int64, count: Int) {
        let key = detail.isEmpty ? "unknown" : detail
        total += count
        counts[key, default: 0] += count
        buckets[parameters.bucketStart(time), default: [:]][key, default: 0] += count
    }

    /// The answer, each group key as the caller is shown it (`shown`; keys that are shown
    /// alike, say two spellings of one address, are counted together).
    func result(shownAs shown: (String) -> String = { $0 }) -> CountStats {
        var names: [String: String] = [:]
        func regroup(_ c: [String: Int]) -> [String: Int] {
            var out: [String: Int] = [:]
            for (key, n) in c {
                let name = names[key] ?? shown(key)
                names[key] = name
                out[name, default: 0] += n
            }
            return out
        }
        return CountStats(
            window: parameters.window, event: event, groupedBy: groupedBy, total: total, counts: regroup(counts),
            buckets: buckets.keys.sorted().map { start in
                let c = buckets[start]!
                return .init(
                    start: Timestamp.format(milliseconds: start), partial: parameters.isPartial(bucketStart: start),
                    total: c.values.reduce(0, +),
                    counts: regroup(c))
            })
    }
}
