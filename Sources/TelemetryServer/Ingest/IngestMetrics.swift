import Metrics
import TelemetryModel

/// Collector-side ingest counters (SPEC §9), labelled by kind, environment and reason.
/// Labels stay low-cardinality: no app, device or identity values.
struct IngestMetrics: Sendable {
    func accepted(_ n: Int, kind: RecordKind, env: TelemetryEnvironment) {
        guard n > 0 else { return }
        Counter(label: "mamtelemetry_records_accepted_total", dimensions: [("kind", kind.rawValue), ("env", env.rawValue)])
            .increment(by: n)
    }

    func rejected(_ n: Int, kind: RecordKind, reason: String) {
        guard n > 0 else { return }
        Counter(label: "mamtelemetry_records_rejected_total", dimensions: [("kind", kind.rawValue), ("reason", reason)])
            .increment(by: n)
    }

    func dropped(_ n: Int, kind: RecordKind, reason: DropReason) {
        guard n > 0 else { return }
        Counter(label: "mamtelemetry_records_dropped_total", dimensions: [("kind", kind.rawValue), ("reason", reason.rawValue)])
            .increment(by: n)
    }

    func bodyBytes(wire: Int, decoded: Int, route: String) {
        Counter(label: "mamtelemetry_request_bytes_total", dimensions: [("route", route)]).increment(by: wire)
        Counter(label: "mamtelemetry_decompressed_bytes_total", dimensions: [("route", route)]).increment(by: decoded)
    }
}
