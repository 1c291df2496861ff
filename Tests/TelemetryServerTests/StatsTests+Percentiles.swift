import StoreCore
import TelemetryStore

extension StatsTests {
    /// The percentiles of `d` that are not the nearest rank of `values` rounded toward zero
    /// to the sketch's precision (so within its relative error of the exact value).
    static func roundedPercentilesMismatch(_ d: [String: Double], of values: [Double]) -> [String] {
        [("p50", 0.50), ("p95", 0.95), ("p99", 0.99)].compactMap { key, p in
            let exact = nearestRank(values, p)
            let answered = d[key] ?? -1
            let ok =
                answered == LatencySketch.rounded(exact) && answered <= exact
                && answered >= exact * (1 - LatencySketch.relativeError)
            return ok ? nil : "\(key): \(answered) for exact \(exact)"
        }
    }
}
