import Hummingbird
import Metrics
import TelemetryModel

/// Counts HTTP answers by route template, method and status
/// (`mamtelemetry_http_requests_total`), so operators can alert on refused ingest
/// (5xx, 429, 507). Routes are the registered templates (`/v1/incidents/{id}`), never
/// raw paths, so series stay bounded. Hummingbird's own `MetricsMiddleware` uses dotted
/// OpenTelemetry names that are not valid Prometheus metric names. Hummingbird applies a
/// middleware only to routes added after it, so `buildRouter` adds this one first.
struct HTTPMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let factory: any MetricsFactory

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            count(request, context, status: response.status.code)
            return response
        } catch {
            count(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500)
            throw error
        }
    }

    private func count(_ request: Request, _ context: Context, status: Int) {
        Counter(
            label: MetricName.httpRequests.rawValue,
            dimensions: [("route", context.endpointPath ?? "unmatched"), ("method", request.method.rawValue), ("status", String(status))],
            factory: factory
        ).increment()
    }
}
