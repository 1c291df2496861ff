import TelemetryModel

/// Aggregates of `EnrollmentCall` events: counts, success rate, duration percentiles and
/// the failing status codes (with their SDK names) that matter most.
struct EnrollmentSummary: Encodable {
    var count = 0
    var succeeded = 0
    var failed = 0
    /// succeeded / (succeeded + failed); nil when no call reported an outcome.
    var successRate: Double?
    var durationMs: Percentiles?
    var topFailures: [StatusCount] = []

    struct Percentiles: Encodable {
        var p50: Double
        var p95: Double
        var p99: Double
    }

    struct StatusCount: Encodable {
        var statusCode: Int
        var name: String?
        var count: Int
    }
}

/// Collects one group of calls (a bucket, an operation); `summary()` finishes it.
struct EnrollmentAccumulator {
    var count = 0
    var succeeded = 0
    var failed = 0
    var durations: [Double] = []
    var failures: [Int: Int] = [:]

    static let topFailureCount = 5

    mutating func add(_ k: RecordKeys) {
        count += 1
        let ok = k.succeeded ?? k.statusCode.map(EnrollmentStatus.isSuccess)
        switch ok {
        case true?: succeeded += 1
        case false?:
            failed += 1
            if let code = k.statusCode { failures[code, default: 0] += 1 }
        case nil: break
        }
        if let d = k.durationMs, d.isFinite { durations.append(d) }
    }

    func summary() -> EnrollmentSummary {
        var s = EnrollmentSummary(count: count, succeeded: succeeded, failed: failed)
        if succeeded + failed > 0 { s.successRate = Double(succeeded) / Double(succeeded + failed) }
        if !durations.isEmpty {
            let sorted = durations.sorted()
            s.durationMs = .init(
                p50: Percentile.nearestRank(sorted, 0.50), p95: Percentile.nearestRank(sorted, 0.95),
                p99: Percentile.nearestRank(sorted, 0.99))
        }
        s.topFailures = failures.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(Self.topFailureCount)
            .map { .init(statusCode: $0.key, name: EnrollmentStatus.name(of: $0.key), count: $0.value) }
        return s
    }
}

enum Percentile {
    /// Nearest-rank percentile of ascending `sorted` values (an observed value, never interpolated).
    static func nearestRank(_ sorted: [Double], _ p: Double) -> Double {
        precondition(!sorted.isEmpty)
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

/// `GET /v1/stats/enrollment`: the whole window, per operation, and per time bucket.
struct EnrollmentStats: Encodable {
    var window: StatsWindow
    var total: EnrollmentSummary
    var byOperation: [String: EnrollmentSummary]
    var buckets: [Bucket]

    struct Bucket: Encodable {
        var start: String
        var total: EnrollmentSummary
        var byOperation: [String: EnrollmentSummary]
    }
}

/// Builds `EnrollmentStats` from the keys the store visits.
struct EnrollmentStatsBuilder {
    let parameters: StatsParameters
    var total = EnrollmentAccumulator()
    var byOperation: [String: EnrollmentAccumulator] = [:]
    var buckets: [Int64: (total: EnrollmentAccumulator, byOperation: [String: EnrollmentAccumulator])] = [:]

    mutating func add(_ k: RecordKeys) {
        guard k.name == EventName.enrollmentCall, parameters.includes(k) else { return }
        let op = k.detail.isEmpty ? "unknown" : k.detail
        total.add(k)
        byOperation[op, default: .init()].add(k)
        let start = parameters.bucketStart(k.time)
        buckets[start, default: (.init(), [:])].total.add(k)
        buckets[start]!.byOperation[op, default: .init()].add(k)
    }

    func result() -> EnrollmentStats {
        EnrollmentStats(
            window: parameters.window, total: total.summary(), byOperation: byOperation.mapValues { $0.summary() },
            buckets: buckets.keys.sorted().map { start in
                let b = buckets[start]!
                return .init(
                    start: Timestamp.format(milliseconds: start), total: b.total.summary(),
                    byOperation: b.byOperation.mapValues { $0.summary() })
            })
    }
}

extension StatsParameters {
    /// The store filters by time window; the app filter and the exact bounds apply here.
    func includes(_ k: RecordKeys) -> Bool {
        if let app, k.appId != app { return false }
        return k.time >= since && k.time <= until
    }
}
