import StoreCore
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

/// Collects one group of calls (a bucket, an operation) from records and rollup rows alike;
/// `summary()` finishes it. Durations go into the buckets of a ``LatencySketch`` on both paths
/// (a ``LatencyAccumulator``), so an answer is the same whichever mix of rollups and records
/// it was computed from.
struct EnrollmentAccumulator {
    var count = 0
    var succeeded = 0
    var failed = 0
    var durations = LatencyAccumulator()
    var failures: [Int: Int] = [:]

    static let topFailureCount = 5

    mutating func add(_ k: RecordKeys) {
        add(calls: 1, statusCode: k.statusCode, succeeded: k.succeeded)
        if let d = k.durationMs { durations.add(d) }
    }

    mutating func add(_ row: EventRollup) {
        add(calls: row.count, statusCode: row.statusCode, succeeded: row.succeeded)
    }

    mutating func add(_ row: EventLatencyRollup) {
        durations.merge(row.durations)
    }

    mutating func merge(_ other: EnrollmentAccumulator) {
        count += other.count
        succeeded += other.succeeded
        failed += other.failed
        durations.merge(other.durations)
        for (code, n) in other.failures { failures[code, default: 0] += n }
    }

    /// A call's outcome is its own `didSucceed` when it reported one, else its status code's.
    private mutating func add(calls: Int, statusCode: Int?, succeeded reported: Bool?) {
        count += calls
        switch reported ?? statusCode.map(EnrollmentStatus.isSuccess) {
        case true?: succeeded += calls
        case false?:
            failed += calls
            if let code = statusCode { failures[code, default: 0] += calls }
        case nil: break
        }
    }

    func summary() -> EnrollmentSummary {
        var s = EnrollmentSummary(count: count, succeeded: succeeded, failed: failed)
        if succeeded + failed > 0 { s.successRate = Double(succeeded) / Double(succeeded + failed) }
        let p = durations.percentiles([0.50, 0.95, 0.99])
        if let p50 = p[0], let p95 = p[1], let p99 = p[2] {
            s.durationMs = .init(p50: p50, p95: p95, p99: p99)
        }
        s.topFailures = failures.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(Self.topFailureCount)
            .map { .init(statusCode: $0.key, name: EnrollmentStatus.name(of: $0.key), count: $0.value) }
        return s
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
        /// The window covers only part of this bucket (typically the current one, still
        /// filling): its counts are not comparable with whole buckets.
        var partial: Bool
        var total: EnrollmentSummary
        var byOperation: [String: EnrollmentSummary]
    }
}

/// Builds `EnrollmentStats` from what the store visits: records and rollup rows.
struct EnrollmentStatsBuilder {
    let parameters: StatsParameters
    /// One accumulator per (bucket start, operation). Inputs are added here only; the
    /// buckets', the operations' and the window's totals are merged from these cells once, in
    /// `result()`, so each record or rollup row (with its duration sketch) is added once, not
    /// four times.
    var cells: [EnrollmentAccumulator] = []
    var cellIndex: [Cell: Int] = [:]
    /// The cell of the previous input: rollup rows arrive in key order (hour, app, operation,
    /// status code), so runs of rows share a cell and skip the dictionary.
    var last: (cell: Cell, index: Int)?

    struct Cell: Hashable {
        var start: Int64
        var operation: String
    }

    mutating func add(_ input: EventStatsInput) {
        switch input {
        case .record(let k):
            guard k.name == EventName.enrollmentCall, parameters.includes(k) else { return }
            add(at: k.time, detail: k.detail) { $0.add(k) }
        case .counts(let row): add(at: row.start, detail: row.detail) { $0.add(row) }
        case .durations(let row): add(at: row.start, detail: row.detail) { $0.add(row) }
        }
    }

    private mutating func add(at time: Int64, detail: String, _ add: (inout EnrollmentAccumulator) -> Void) {
        let cell = Cell(start: parameters.bucketStart(time), operation: detail.isEmpty ? "unknown" : detail)
        let index: Int
        if let last, last.cell.start == cell.start, last.cell.operation == cell.operation {
            index = last.index
        } else if let known = cellIndex[cell] {
            index = known
        } else {
            index = cells.count
            cells.append(EnrollmentAccumulator())
            cellIndex[cell] = index
        }
        last = (cell, index)
        add(&cells[index])
    }

    /// The answer, each operation as the caller is shown it (`shown`; operations shown alike
    /// are merged).
    func result(shownAs shown: (String) -> String = { $0 }) -> EnrollmentStats {
        var total = EnrollmentAccumulator()
        var byOperation: [String: EnrollmentAccumulator] = [:]
        var perBucket: [Int64: [String: EnrollmentAccumulator]] = [:]
        var names: [String: String] = [:]
        for (cell, index) in cellIndex {
            let name = names[cell.operation] ?? shown(cell.operation)
            names[cell.operation] = name
            perBucket[cell.start, default: [:]][name, default: .init()].merge(cells[index])
        }
        let buckets = perBucket.keys.sorted().map { start in
            let operations = perBucket[start]!
            var bucketTotal = EnrollmentAccumulator()
            for (op, calls) in operations {
                bucketTotal.merge(calls)
                byOperation[op, default: .init()].merge(calls)
            }
            total.merge(bucketTotal)
            return EnrollmentStats.Bucket(
                start: Timestamp.format(milliseconds: start), partial: parameters.isPartial(bucketStart: start),
                total: bucketTotal.summary(),
                byOperation: operations.mapValues { $0.summary() })
        }
        return EnrollmentStats(
            window: parameters.window, total: total.summary(), byOperation: byOperation.mapValues { $0.summary() }, buckets: buckets)
    }
}

extension StatsParameters {
    /// Whether the window covers only part of the bucket starting at `start`: it begins before
    /// `since` or ends after `until` (the current bucket, while `until` is now).
    func isPartial(bucketStart start: Int64) -> Bool {
        let (end, overflow) = start.addingReportingOverflow(interval)
        return start < since || overflow || end - 1 > until
    }

    /// The store filters by time window; the app filter and the exact bounds apply here.
    func includes(_ k: RecordKeys) -> Bool {
        if let app, k.appId != app { return false }
        return k.time >= since && k.time <= until
    }
}
