import Prometheus

/// `GET /v1/stats/drops`: records dropped by policy and rejected as invalid, by reason.
///
/// Dropped and rejected records never reach the store, so unlike the other stats these
/// cannot be recomputed from history. Persisting per-hour drop counts would need a new
/// store table (a storage-format change owned elsewhere); instead the answer reports the
/// daemon's own counters and says so in `coverage`. Prometheus, scraping `/metrics`,
/// keeps the history of the same counters.
struct DropStats: Encodable {
    var coverage = "since daemon start"
    var note =
        "dropped and rejected records are never stored; these are the daemon's in-process counters (also on /metrics as mamtelemetry_records_dropped_total and mamtelemetry_records_rejected_total), so since/until/interval/app do not apply"
    var env: String
    var dropped: [String: Int]
    var rejected: [String: Int]
    var droppedByKind: [String: [String: Int]]
    var rejectedByKind: [String: [String: Int]]

    /// Reads the counters back from the registry's exposition (the only reader swift-metrics
    /// counters have). Drops are not split by environment: a record dropped before routing
    /// has none, so `env` only echoes the request.
    static func from(registry: PrometheusCollectorRegistry, env: String) -> DropStats {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        let text = String(decoding: buffer, as: UTF8.self)
        let dropped = samples(of: MetricName.droppedRecords, in: text)
        let rejected = samples(of: MetricName.rejectedRecords, in: text)
        return DropStats(
            env: env, dropped: byReason(dropped), rejected: byReason(rejected),
            droppedByKind: byKind(dropped), rejectedByKind: byKind(rejected))
    }

    struct Sample {
        var labels: [String: String]
        var value: Int
    }

    static func samples(of name: String, in text: String) -> [Sample] {
        var out: [Sample] = []
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            var labels: [String: String] = [:]
            if let open = line.firstIndex(of: "{"), let close = line.lastIndex(of: "}") {
                // Label values here are enum raw values (no quotes or commas inside).
                for pair in line[line.index(after: open)..<close].split(separator: ",") {
                    let kv = pair.split(separator: "=", maxSplits: 1)
                    guard kv.count == 2 else { continue }
                    labels[String(kv[0])] = String(kv[1].trimmingPrefixAndSuffix("\""))
                }
            }
            out.append(Sample(labels: labels, value: Int(value)))
        }
        return out
    }

    static func byReason(_ samples: [Sample]) -> [String: Int] {
        var out: [String: Int] = [:]
        for s in samples { out[s.labels["reason"] ?? "unknown", default: 0] += s.value }
        return out
    }

    static func byKind(_ samples: [Sample]) -> [String: [String: Int]] {
        var out: [String: [String: Int]] = [:]
        for s in samples { out[s.labels["kind"] ?? "unknown", default: [:]][s.labels["reason"] ?? "unknown", default: 0] += s.value }
        return out
    }
}

extension Substring {
    fileprivate func trimmingPrefixAndSuffix(_ c: Character) -> Substring {
        var s = self
        if s.first == c { s = s.dropFirst() }
        if s.last == c { s = s.dropLast() }
        return s
    }
}
