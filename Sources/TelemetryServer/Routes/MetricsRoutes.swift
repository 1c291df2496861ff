import ControlState
import HTTPTypes
import Hummingbird
import Prometheus
import StoreCore

/// `GET /metrics`: Prometheus text format 0.0.4, built at scrape time.
struct MetricsRoutes: Sendable {
    let registry: PrometheusCollectorRegistry
    let store: any RecordStore

    /// Open to local scrapers by default (no personal data), `read` when the operator says so.
    let metricsOpen: @Sendable () -> Bool

    func register(on api: APIRoutes) {
        let metrics = api.group(.scopeUnlessOpened(.read, isOpen: metricsOpen), apps: .everyApp)
        let exposition = MetricsExposition(registry: registry, storeSizes: { [store] in store.sizes() })
        metrics.get("/metrics") { _, _ in
            var headers: HTTPFields = [:]
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: exposition.render())))
        }
    }
}
