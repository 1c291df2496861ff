import ControlState
import HTTPTypes
import Hummingbird
import NIOCore
import OTLP
import TelemetryModel

/// `POST /v1/telemetry`, `POST /v1/logs`, `POST /v1/diagnostics`: each admits the request,
/// reads its body, hands the bytes and header values to the ingest pipeline and writes the
/// answer. Every refusal becomes its HTTP answer in one place (`IngestRefusal+HTTP`).
struct IngestRoutes: Sendable {
    let pipeline: IngestPipeline
    let admission: IngestAdmission
    let refusals: IngestRefusalLog

    func register(on api: APIRoutes) {
        let ingest = api.requiring(.ingest, apps: .perRecord)
        ingest.post("/v1/telemetry") { request, context in
            try await admitted(request) { budget in
                let body = try await read(request, route: "telemetry", budget: budget)
                return answer(try await pipeline.telemetry(body, caller: context.principal, budget: budget))
            }
        }
        ingest.post("/v1/logs") { request, context in
            try await otlpAnswering(request) { try await admitted(request) { try await logs(request, context, $0) } }
        }
        ingest.post("/v1/diagnostics") { request, context in
            try await admitted(request) { budget in
                let body = try await read(request, route: "diagnostics", budget: budget)
                return answer(try await pipeline.diagnostics(body, caller: context.principal, budget: budget), status: .created)
            }
        }
    }

    /// Reserves the request's declared size (or the body limit when it declares none); the
    /// reservation then grows with every decompressed byte (`IngestAdmission`). Refusals
    /// become their HTTP answers here; every retry-later one (429, 503, 507) is logged.
    private func admitted(_ request: Request, _ body: (InFlightReservation) async throws -> Response) async throws -> Response {
        let declared = request.headers[.contentLength].flatMap(Int.init) ?? pipeline.configuration.maxBodyBytes
        do {
            return try await admission.admit(bytes: min(declared, pipeline.configuration.maxBodyBytes), body)
        } catch let refusal as IngestRefusal {
            let error = refusal.apiError
            if [429, 503, 507].contains(error.status.code) {
                refusals.refused(reason: error.code, status: error.status.code, message: error.message)
            }
            throw error
        }
    }

    /// Reads the body within `maxBodyBytes` and undoes its Content-Encoding.
    private func read(_ request: Request, route: String, budget: InFlightReservation) async throws -> [UInt8] {
        let limit = pipeline.configuration.maxBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw IngestRefusal.bodyTooLarge(declared: length, limit: limit)
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw IngestRefusal.bodyTooLarge(declared: nil, limit: limit)
        }
        return try pipeline.decodeContent(
            [UInt8](buffer: buffer), contentEncoding: request.headers[.contentEncoding], route: route, budget: budget)
    }

    /// The native answer: the counts, with the kill-switch headers.
    private func answer(_ result: IngestResult, status: HTTPResponse.Status = .ok) -> Response {
        .json(result.encode(), status: status, headers: result.killSwitchHeaders)
    }

    /// `POST /v1/logs` takes the native shapes and OTLP/HTTP exports (protobuf, or JSON
    /// with `resourceLogs`), told apart by Content-Type and the body.
    private func logs(_ request: Request, _ context: AppRequestContext, _ budget: InFlightReservation) async throws -> Response {
        let principal = context.principal
        let body = try await read(request, route: "logs", budget: budget)
        let contentType = request.headers[.contentType]
        if let encoding = OTLPEncoding.detect(contentType: contentType, body: body) {
            return try await otlpLogs(body, encoding: encoding, principal: principal, budget: budget)
        }
        func param(_ name: String, _ header: String) -> String? {
            context.query.value(name) ?? request.headers[HTTPField.Name(header)!]
        }
        let defaults = LogDefaults(
            appId: param("app", "X-MAM-App-Id"), deviceId: param("device", "X-MAM-Device-Id"),
            sessionId: param("session", "X-MAM-Session-Id"))
        return answer(try await pipeline.logs(body, contentType: contentType, defaults: defaults, caller: principal, budget: budget))
    }
}
