import Metrics
import TelemetryModel

/// Fleet metrics recorded for every event the store kept: launches by management
/// type, enrollment calls by operation and status code (with the code's SDK name), enrollment
/// latency, Intune actions. Never labelled with device ids, identities or app ids; the
/// client strings management type, operation and action are labels only when they are in
/// the SDK's vocabulary (`LabelVocabulary`), `other` otherwise.
struct DomainMetrics: Sendable {
    let factory: any MetricsFactory

    let managementTypes = LabelVocabulary.managementTypes
    let operations = LabelVocabulary.operations
    let actions = LabelVocabulary.actions

    /// One labelled series; counts are summed per batch so a batch of thousands of events
    /// touches the registry once per series, not once per event.
    struct Series: Hashable {
        var label: String
        var dimensions: [String]  // name, value, name, value, ...

        init(_ label: String, _ pairs: [(String, String)]) {
            self.label = label
            dimensions = pairs.flatMap { [$0.0, $0.1] }
        }

        var pairs: [(String, String)] { stride(from: 0, to: dimensions.count, by: 2).map { (dimensions[$0], dimensions[$0 + 1]) } }
    }

    /// Records the events of `list` that were stored now (not the retried duplicates).
    func recordStored(_ list: [DecodedRecord], duplicateIndices: [Int], env: TelemetryEnvironment) {
        let skip = Set(duplicateIndices)
        var counts: [Series: Int] = [:]
        var durations: [Series: [Double]] = [:]
        for (i, stored) in list.enumerated() where !skip.contains(i) {
            collect(stored.keys, env: env, counts: &counts, durations: &durations)
        }
        for (series, n) in counts { Counter(label: series.label, dimensions: series.pairs, factory: factory).increment(by: n) }
        for (series, values) in durations {
            let recorder = Recorder(label: series.label, dimensions: series.pairs, factory: factory)
            for v in values { recorder.record(v) }
        }
    }

    func collect(_ k: RecordKeys, env: TelemetryEnvironment, counts: inout [Series: Int], durations: inout [Series: [Double]]) {
        switch k.name {
        case EventName.appLaunch:
            counts[
                Series(MetricName.appLaunches.rawValue, [("management_type", managementTypes.label(k.detail)), ("env", env.rawValue)]),
                default: 0] += 1
        case EventName.enrollmentCall:
            let operation = operations.label(k.detail)
            let (code, name) = Self.statusLabels(k.statusCode)
            let series = Series(
                MetricName.enrollmentCalls.rawValue,
                [("operation", operation), ("status_code", code), ("status_name", name), ("env", env.rawValue)])
            counts[series, default: 0] += 1
            if let ms = k.durationMs, ms.isFinite, ms >= 0 {
                durations[Series(MetricName.enrollmentDuration.rawValue, [("operation", operation), ("env", env.rawValue)]), default: []]
                    .append(ms / 1000)
            }
        case EventName.intuneAction:
            counts[Series(MetricName.intuneActions.rawValue, [("action", actions.label(k.detail)), ("env", env.rawValue)]), default: 0] += 1
        default:
            break
        }
    }

    /// Documented codes keep their number and name; any other code is `other` (bounded).
    static func statusLabels(_ code: Int?) -> (code: String, name: String) {
        guard let code else { return ("none", "none") }
        guard let name = EnrollmentStatus.name(of: code) else { return (LabelVocabulary.other, "unknown") }
        return (String(code), name)
    }
}
