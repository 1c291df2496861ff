import ControlState
import Metrics
import TelemetryModel

/// Per-app fleet metrics, for the domain alerts (`dashboards/alerts.yml`): enrollment calls by
/// outcome, failed calls by status code, launches — each labelled with the app. The `app`
/// label is bounded: an app in the registry is named, as are the first ``otherAppsLimit``
/// others seen since start whose id is shaped like a bundle id; every other app is `other`.
/// Status codes are the documented failure codes, `other` for any other code, `none` without.
struct AppMetrics: Sendable {
    static let otherAppsLimit = 20
    static let bundleIDMaxLength = 128

    let factory: any MetricsFactory
    let registry: AppRegistry
    private let others = LabelCap(limit: AppMetrics.otherAppsLimit)

    init(factory: any MetricsFactory, registry: AppRegistry) {
        self.factory = factory
        self.registry = registry
    }

    /// The `app` label for an app id.
    func label(_ app: String) -> String {
        if registry.flags(for: app) != nil { return app }
        guard Self.looksLikeBundleID(app) else { return LabelCap.overflow }
        return others.label(app)
    }

    /// Reverse-DNS letters only (`com.contoso.mail`): an id that could carry anything else (an
    /// address, free text) never becomes a label value.
    static func looksLikeBundleID(_ app: String) -> Bool {
        guard !app.isEmpty, app.utf8.count <= bundleIDMaxLength, app.contains(".") else { return false }
        return app.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D || c == 0x5F
        }
    }

    /// Counts the events of `list` stored now (not the retried duplicates), once per series.
    func recordStored(_ list: [DecodedRecord], duplicateIndices: [Int], env: TelemetryEnvironment) {
        let skip = Set(duplicateIndices)
        var counts: [DomainMetrics.Series: Int] = [:]
        var labels: [String: String] = [:]
        for (i, record) in list.enumerated() where !skip.contains(i) {
            let k = record.keys
            guard k.name == EventName.enrollmentCall || k.name == EventName.appLaunch else { continue }
            let app = labels[k.appId] ?? label(k.appId)
            labels[k.appId] = app
            if k.name == EventName.appLaunch {
                counts[.init(MetricName.appLaunchesByApp.rawValue, [("app", app), ("env", env.rawValue)]), default: 0] += 1
                continue
            }
            let outcome: String
            switch k.succeeded ?? k.statusCode.map(EnrollmentStatus.isSuccess) {
            case true?: outcome = "succeeded"
            case false?: outcome = "failed"
            case nil: outcome = "unknown"
            }
            counts[
                .init(MetricName.appEnrollmentCalls.rawValue, [("app", app), ("outcome", outcome), ("env", env.rawValue)]), default: 0] += 1
            if outcome == "failed" {
                let (code, name) = DomainMetrics.statusLabels(k.statusCode)
                counts[
                    .init(
                        MetricName.appEnrollmentFailures.rawValue,
                        [("app", app), ("status_code", code), ("status_name", name), ("env", env.rawValue)]), default: 0] += 1
            }
        }
        for (series, n) in counts { Counter(label: series.label, dimensions: series.pairs, factory: factory).increment(by: n) }
    }
}
