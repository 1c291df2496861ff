import ControlState
import Metrics
import TelemetryModel

/// Collector-side ingest counters, labelled by kind, environment and route. Labels stay
/// low-cardinality: no app, device or identity values (drops and rejections are counted by
/// `DropCounter`). `domain` holds the fleet metrics recorded for stored events.
struct IngestMetrics: Sendable {
    let factory: any MetricsFactory
    let domain: DomainMetrics
    /// The per-app series the domain alerts read (bounded `app` label); nil without a registry.
    let apps: AppMetrics?

    init(factory: any MetricsFactory, registry: AppRegistry? = nil) {
        self.factory = factory
        domain = DomainMetrics(factory: factory)
        apps = registry.map { AppMetrics(factory: factory, registry: $0) }
    }

    func accepted(_ n: Int, kind: RecordKind, env: TelemetryEnvironment) {
        guard n > 0 else { return }
        Counter(label: MetricName.recordsAccepted.rawValue, dimensions: [("kind", kind.rawValue), ("env", env.rawValue)], factory: factory)
            .increment(by: n)
    }

    func bodyBytes(wire: Int, decoded: Int, route: String) {
        Counter(label: MetricName.requestBytes.rawValue, dimensions: [("route", route)], factory: factory).increment(by: wire)
        Counter(label: MetricName.decompressedBytes.rawValue, dimensions: [("route", route)], factory: factory).increment(by: decoded)
    }

    func incidentCreated(env: TelemetryEnvironment) {
        Counter(label: MetricName.incidentsCreated.rawValue, dimensions: [("env", env.rawValue)], factory: factory).increment()
    }
}
