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

    mutating func add(_ k: RecordKeys) {
        guard k.name == event, parameters.includes(k) else { return }
        let key = k.detail.isEmpty ? "unknown" : k.detail
        total += 1
        counts[key, default: 0] += 1
        buckets[parameters.bucketStart(k.time), default: [:]][key, default: 0] += 1
    }

    func result() -> CountStats {
        CountStats(
            window: parameters.window, event: event, groupedBy: groupedBy, total: total, counts: counts,
            buckets: buckets.keys.sorted().map { start in
                let c = buckets[start]!
                return .init(start: Timestamp.format(milliseconds: start), total: c.values.reduce(0, +), counts: c)
            })
    }
}
