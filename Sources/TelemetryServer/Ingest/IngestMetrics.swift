import Metrics
import TelemetryModel

/// Collector-side ingest counters, labelled by kind, environment and route. Labels stay
/// low-cardinality: no app, device or identity values (drops and rejections are counted by
/// `DropCounter`).
struct IngestMetrics: Sendable {
    func accepted(_ n: Int, kind: RecordKind, env: TelemetryEnvironment) {
        guard n > 0 else { return }
        Counter(label: "mamtelemetry_records_accepted_total", dimensions: [("kind", kind.rawValue), ("env", env.rawValue)])
            .increment(by: n)
    }

    func bodyBytes(wire: Int, decoded: Int, route: String) {
        Counter(label: "mamtelemetry_request_bytes_total", dimensions: [("route", route)]).increment(by: wire)
        Counter(label: "mamtelemetry_decompressed_bytes_total", dimensions: [("route", route)]).increment(by: decoded)
    }

    func incidentCreated(env: TelemetryEnvironment) {
        Counter(label: "mamtelemetry_incidents_created_total", dimensions: [("env", env.rawValue)]).increment()
    }
}
