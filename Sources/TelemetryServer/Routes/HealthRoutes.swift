import Hummingbird
import TelemetryModel

/// A component `/readyz` reports on. `required` checks decide readiness; the others (the
/// journal mirror) are reported but do not take the daemon out of service, because it
/// keeps collecting without them.
public struct ReadinessCheck: Sendable {
    public var name: String
    public var required: Bool
    public var probe: @Sendable () async -> (ok: Bool, detail: String)

    public init(name: String, required: Bool, probe: @escaping @Sendable () async -> (ok: Bool, detail: String)) {
        self.name = name
        self.required = required
        self.probe = probe
    }
}

/// `GET /healthz` (the process answers) and `GET /readyz` (store open and accepting).
struct HealthRoutes: Sendable {
    let checks: [ReadinessCheck]

    func register(on api: APIRoutes) {
        let open = api.open()
        open.get("/healthz") { _, _ in Response.json(Array("{\"status\":\"ok\"}\n".utf8)) }
        open.get("/readyz") { _, _ in await readiness() }
    }

    func readiness() async -> Response {
        var ready = true
        var w = JSONWriter()
        w.beginObject()
        var results = JSONWriter()
        results.beginObject()
        for check in checks {
            let (ok, detail) = await check.probe()
            if check.required && !ok { ready = false }
            var c = JSONWriter()
            c.beginObject()
            c.field("ok", ok)
            c.field("required", check.required)
            c.field("detail", detail)
            c.endObject()
            results.field(check.name, rawJSON: c.bytes)
        }
        results.endObject()
        w.field("status", ready ? "ready" : "not_ready")
        w.field("checks", rawJSON: results.bytes)
        w.endObject()
        return .json(w.bytes + [0x0A], status: ready ? .ok : .serviceUnavailable)
    }
}

/// `GET /openapi.yaml`: the API description, open like the health probes (it holds no data).
struct OpenAPIRoutes: Sendable {
    func register(on api: APIRoutes) {
        let open = api.open()
        open.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
        }
    }
}
