import HTTPTypes
import TelemetryStore

/// Which scope each route needs (SPEC §8). One table, so the scope matrix test and the
/// OpenAPI document can be checked against it. `nil` means open (health probes, and the
/// API description, which holds no data).
enum RoutePolicy {
    static func requiredScope(method: HTTPRequest.Method, path: String, metricsRequireToken: Bool) -> Scope? {
        switch path {
        case "/healthz", "/readyz", "/openapi.yaml":
            return nil
        case "/metrics":
            return metricsRequireToken ? .read : nil
        default:
            break
        }
        if path.hasPrefix("/v1/tokens") || path.hasPrefix("/v1/apps") { return .admin }
        // Turning a UPN into its pseudonym undoes the pseudonym for whoever may ask.
        if path == "/v1/pseudonyms" { return .pii }
        if path == "/v1/bundles" || (path.hasPrefix("/v1/incidents/") && path.hasSuffix("/bundle")) { return .bundle }
        if method == .post, ["/v1/telemetry", "/v1/logs", "/v1/diagnostics"].contains(path) { return .ingest }
        // Every other route reads data.
        return .read
    }
}
