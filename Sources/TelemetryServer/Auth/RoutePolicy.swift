import HTTPTypes
import TelemetryStore

/// Which scope each route needs (SPEC §8). One table, so the scope matrix test and the
/// OpenAPI document can be checked against it. `nil` means open (health probes, the API
/// description and the browser console's page and scripts, which hold no data).
enum RoutePolicy {
    static func requiredScope(method: HTTPRequest.Method, path: String, metricsRequireToken: Bool) -> Scope? {
        switch path {
        case "/healthz", "/readyz", "/openapi.yaml":
            return nil
        case "/metrics":
            return metricsRequireToken ? .read : nil
        case "/console":
            return nil
        default:
            break
        }
        if path.hasPrefix("/console/") { return nil }
        // `/v1/whoami` needs `read` like the other reads: the console it serves is a read tool.
        if path.hasPrefix("/v1/tokens") || path.hasPrefix("/v1/apps") { return .admin }
        if path == "/v1/bundles" || (path.hasPrefix("/v1/incidents/") && path.hasSuffix("/bundle")) { return .bundle }
        if method == .post, ["/v1/telemetry", "/v1/logs", "/v1/diagnostics"].contains(path) { return .ingest }
        // Every other route reads data.
        return .read
    }
}
