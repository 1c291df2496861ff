import Metrics

/// The mirror's swift-metrics instruments, created once from the factory the daemon
/// bootstrapped (Prometheus in production), so a slow or absent journald shows on the
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
        sent = Counter(label: "mamtelemetry_journal_mirror_sent_total", factory: factory)
        failed = Counter(label: "mamtelemetry_journal_mirror_failed_total", factory: factory)
        dropped = Counter(label: "mamtelemetry_journal_mirror_dropped_total", factory: factory)
        queueDepth = Gauge(label: "mamtelemetry_journal_mirror_queue_depth", factory: factory)
        sendDuration = Timer(label: "mamtelemetry_journal_mirror_send_seconds", factory: factory)
    }
}
