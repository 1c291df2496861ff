import Metrics
import Prometheus
import Synchronization

/// Installs swift-prometheus as the process's swift-metrics backend. swift-metrics allows one
/// bootstrap per process and metric objects bind to the factory when they are created, so the
/// daemon calls this first thing (before opening the store, whose committer creates its
/// metrics at init); later calls — tests in one process, `buildRouter` — get the same registry.
public enum MetricsBootstrap {
    private static let installed = Mutex<PrometheusCollectorRegistry?>(nil)

    /// The registry `/metrics` serves; bootstraps on first use.
    @discardableResult
    public static func bootstrap() -> PrometheusCollectorRegistry {
        installed.withLock { current in
            if let current { return current }
            let registry = PrometheusCollectorRegistry()
            var factory = PrometheusMetricsFactory(registry: registry)
            // Durable commits are fsync-bound: sub-millisecond on tmpfs, tens of ms on disks.
            factory.durationHistogramBuckets[MetricName.commitDuration] = [
                .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                .seconds(1), .milliseconds(2500), .seconds(5),
            ]
            // Enrollment calls are network round trips to the MAM service: 50 ms .. a minute.
            factory.valueHistogramBuckets[MetricName.enrollmentDuration] = [
                0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60,
            ]
            MetricsSystem.bootstrap(factory)
            current = registry
            return registry
        }
    }
}

/// Metric names this target defines or configures (the others live beside their emitters).
enum MetricName {
    static let commitDuration = "mamtelemetry_commit_duration_seconds"
    static let appLaunches = "mamtelemetry_app_launches_total"
    static let enrollmentCalls = "mamtelemetry_enrollment_calls_total"
    /// Seconds, not milliseconds: Prometheus base units (`promtool check metrics` refuses `_ms`).
    static let enrollmentDuration = "mamtelemetry_enrollment_duration_seconds"
    static let intuneActions = "mamtelemetry_intune_actions_total"
    static let droppedRecords = "mamtelemetry_records_dropped_total"
    static let rejectedRecords = "mamtelemetry_records_rejected_total"
}
