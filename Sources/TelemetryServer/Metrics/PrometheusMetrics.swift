public import Metrics
public import Prometheus
import TelemetryModel

/// The daemon's metrics backend: one Prometheus registry, which `/metrics` renders, and the
/// swift-metrics factory every component creates its instruments from. Made once by whoever
/// builds the daemon (the daemon itself, or a test that wants its own registry) and passed
/// in; nothing reaches for a process-wide metrics system, so two daemons in one process
/// (tests) never share or lose a series.
public struct PrometheusMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    public let factory: any MetricsFactory

    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Durable commits are fsync-bound: sub-millisecond on tmpfs, tens of ms on disks.
        factory.durationHistogramBuckets[MetricName.commitDuration.rawValue] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5),
        ]
        // Enrollment calls are network round trips to the MAM service: 50 ms .. a minute.
        factory.valueHistogramBuckets[MetricName.enrollmentDuration.rawValue] = [
            0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60,
        ]
        self.registry = registry
        self.factory = factory
    }
}
