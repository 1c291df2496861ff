import Metrics
import TelemetryModel

/// The mirror's swift-metrics instruments, created once from the factory the daemon
/// passes in (Prometheus in production), so a slow or absent journald shows on the
/// dashboards rather than as silent loss.
struct JournalMirrorMetrics: Sendable {
    /// Entries journald accepted.
    let sent: Counter
    /// Entries journald refused or could not be reached for.
    let failed: Counter
    /// Entries dropped: queue full, or not flushed before the shutdown deadline.
    let dropped: Counter
    /// Entries waiting for journald.
    let queueDepth: Gauge
    /// Time one `sd_journal_sendv` took: how slow journald is being.
    let sendDuration: Timer

    init(factory: any MetricsFactory) {
        sent = Counter(label: MetricName.journalMirrorSent.rawValue, factory: factory)
        failed = Counter(label: MetricName.journalMirrorFailed.rawValue, factory: factory)
        dropped = Counter(label: MetricName.journalMirrorDropped.rawValue, factory: factory)
        queueDepth = Gauge(label: MetricName.journalMirrorQueueDepth.rawValue, factory: factory)
        sendDuration = Timer(label: MetricName.journalMirrorSendDuration.rawValue, factory: factory)
    }
}
