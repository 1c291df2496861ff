import Prometheus
import TelemetryModel

/// Builds the `/metrics` body (text format 0.0.4): the swift-metrics registry, the store's
/// size per environment and the process figures, each family with a `# HELP` line
/// (`promtool check metrics` refuses families without one; swift-metrics has no help text).
struct MetricsExposition: Sendable {
    let registry: PrometheusCollectorRegistry
    let storeSizes: @Sendable () -> PerEnvironment<Int64>

    func render() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        var text = Self.addingHelp(to: String(decoding: buffer, as: UTF8.self))
        let storeSize = MetricName.storeSize
        text += "# HELP \(storeSize.rawValue) \(storeSize.help)\n"
        text += "# TYPE \(storeSize.rawValue) gauge\n"
        let sizes = storeSizes()
        for env in TelemetryEnvironment.allCases.sorted(by: { $0.rawValue < $1.rawValue }) {
            text += "\(storeSize.rawValue){env=\"\(env.rawValue)\"} \(sizes[env])\n"
        }
        text += ProcessMetrics.exposition()
        return Array(text.utf8)
    }

    /// Puts a `# HELP` line before every `# TYPE` line that lacks one.
    static func addingHelp(to text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 4096)
        var previousWasHelp = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# TYPE "), !previousWasHelp {
                let name = line.dropFirst(7).split(separator: " ").first.map(String.init) ?? ""
                out += "# HELP \(name) \(MetricName(rawValue: name)?.help ?? "mamtelemetryd metric \(name).")\n"
            }
            previousWasHelp = line.hasPrefix("# HELP ")
            out += line
            out += "\n"
        }
        return out
    }
}
