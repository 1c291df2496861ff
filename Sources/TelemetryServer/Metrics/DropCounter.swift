import ControlState
import Metrics
import Privacy
import TelemetryModel

/// Counts the records ingest did not store, twice: on `/metrics` (for alerts and
/// dashboards: `mamtelemetry_records_dropped_total{kind,reason,app}`,
/// `mamtelemetry_records_rejected_total{kind,reason}`) and in the ``DropLedger`` (hourly,
/// per app, durable: `/v1/stats/drops`). The `app` label is bounded: the first
/// ``appLabelLimit`` apps seen since start get their own series, later ones (and an app id
/// holding an e-mail address or a credential) share `other`;
/// the ledger has every app by name.
struct DropCounter: Sendable {
    static let appLabelLimit = 20

    let ledger: DropLedger
    let factory: any MetricsFactory
    private let appLabels = LabelCap(limit: DropCounter.appLabelLimit)

    init(ledger: DropLedger, factory: any MetricsFactory) {
        self.ledger = ledger
        self.factory = factory
    }

    /// Records dropped by policy, counted per app.
    func dropped(_ reason: DropReason, kind: RecordKind, byApp: [String: Int], receivedAt: Int64) {
        guard !byApp.isEmpty else { return }
        var series: [String: Int] = [:]
        // An app id is a client string: one holding an e-mail address or a credential is
        // never a label (`/metrics` may be open to anyone).
        for (app, n) in byApp { series[RecordRedactor.isPlain(app) ? appLabels.label(app) : LabelCap.overflow, default: 0] += n }
        for (app, n) in series where n > 0 {
            Counter(
                label: MetricName.recordsDropped.rawValue,
                dimensions: [("kind", kind.rawValue), ("reason", reason.rawValue), ("app", app)],
                factory: factory
            ).increment(by: n)
        }
        ledger.add(.dropped, reason: reason.rawValue, kind: kind, byApp: byApp, receivedAt: receivedAt)
    }

    /// Records rejected as invalid. A line that could not be read names no app reliably,
    /// so these are counted without one.
    func rejected(_ n: Int, kind: RecordKind, reason: String, receivedAt: Int64) {
        guard n > 0 else { return }
        Counter(label: MetricName.recordsRejected.rawValue, dimensions: [("kind", kind.rawValue), ("reason", reason)], factory: factory)
            .increment(by: n)
        ledger.add(.rejected, reason: reason, kind: kind, byApp: ["": n], receivedAt: receivedAt)
    }
}
