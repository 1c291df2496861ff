import Foundation
import HTTPTypes
import Hummingbird
import OTLP
import TelemetryModel
import TelemetryStore

/// `POST /v1/telemetry`, `POST /v1/logs`, `POST /v1/diagnostics`. Each decodes
/// its body line by line, then hands the usable records to the ingest pipeline.
struct IngestRoutes: Sendable {
    let pipeline: IngestPipeline
    let admission: IngestAdmission
    let rateLimiter: TokenRateLimiter
    let refusals: IngestRefusalLog

    func register(on api: APIRoutes) {
        let ingest = api.requiring(.ingest)
        ingest.post("/v1/telemetry") { request, context in try await admitted(request) { try await telemetry(request, context.principal, $0) } }
        ingest.post("/v1/logs") { request, context in
            try await otlpAnswering(request) { try await admitted(request) { try await logs(request, context.principal, $0) } }
        }
        ingest.post("/v1/diagnostics") { request, context in try await admitted(request) { try await diagnostics(request, context.principal, $0) } }
    }

    /// Reserves the request's declared size (or the body limit when it declares none); the
    /// reservation then grows with every decompressed byte (`IngestAdmission`). Every
    /// retry-later refusal (429, 503, 507) the request ends in is logged.
    private func admitted(_ request: Request, _ body: (InFlightReservation) async throws -> Response) async throws -> Response {
        let declared = request.headers[.contentLength].flatMap(Int.init) ?? pipeline.configuration.maxBodyBytes
        do {
            return try await admission.admit(bytes: min(declared, pipeline.configuration.maxBodyBytes), body)
        } catch let error as APIError where [429, 503, 507].contains(error.status.code) {
            refusals.refused(reason: error.code, status: error.status.code, message: error.message)
            throw error
        }
    }

    func telemetry(_ request: Request, _ principal: Token?, _ budget: InFlightReservation) async throws -> Response {
        let body = try await pipeline.readBody(request, route: "telemetry", budget: budget)
        let now = pipeline.clock.nowMilliseconds()
        let decoder = TelemetryEventDecoder(limits: pipeline.configuration.decodeLimits)
        let (records, rejected) = try decodeOrRefuse { try decoder.decode(body: body, receivedAt: now) }
        try rateLimiter.take(records.count, token: principal)
        let result = try await store { try await pipeline.ingest(records, rejected: rejected, kind: .event, receivedAt: now, caller: principal) }
        return try pipeline.respond(result, decodedAnything: !records.isEmpty || !rejected.isEmpty)
    }

    func logs(_ request: Request, _ principal: Token?, _ budget: InFlightReservation) async throws -> Response {
        let body = try await pipeline.readBody(request, route: "logs", budget: budget)
        // OTLP/HTTP exporters post here too (protobuf, or JSON with `resourceLogs`).
        if let encoding = OTLPEncoding.detect(contentType: request.headers[.contentType], body: body) {
            return try await otlpLogs(body, encoding: encoding, principal: principal)
        }
        let now = pipeline.clock.nowMilliseconds()
        let q = request.uri.queryParameters
        func param(_ name: String, _ header: String) -> String? {
            q.get(name) ?? request.headers[HTTPField.Name(header)!]
        }
        let defaults = LogDefaults(
            appId: param("app", "X-MAM-App-Id"), deviceId: param("device", "X-MAM-Device-Id"),
            sessionId: param("session", "X-MAM-Session-Id"))
        let decoder = LogRecordDecoder(limits: pipeline.configuration.decodeLimits)
        let isText = request.headers[.contentType]?.lowercased().hasPrefix("text/plain") == true
        let (records, rejected) = try decodeOrRefuse {
            isText
                ? try decoder.decodeText(body: body, defaults: defaults, receivedAt: now)
                : try decoder.decodeJSON(body: body, defaults: defaults, receivedAt: now)
        }
        try rateLimiter.take(records.count, token: principal)
        let result = try await store { try await pipeline.ingest(records, rejected: rejected, kind: .log, receivedAt: now, caller: principal) }
        return try pipeline.respond(result, decodedAnything: !records.isEmpty || !rejected.isEmpty)
    }

    func diagnostics(_ request: Request, _ principal: Token?, _ budget: InFlightReservation) async throws -> Response {
        let body = try await pipeline.readBody(request, route: "diagnostics", budget: budget)
        let now = pipeline.clock.nowMilliseconds()
        let upload: DiagnosticUpload
        do {
            upload = try DiagnosticUpload(json: body, limits: pipeline.configuration.decodeLimits)
        } catch let error as DiagnosticUpload.Invalid {
            throw APIError.badRequest("invalid_upload", error.message)
        }
        let incidentID = IncidentID.random().value
        let guid = UUID().uuidString.lowercased()
        let defaults = LogDefaults(
            appId: upload.appId, deviceId: upload.deviceId, sessionId: upload.sessionId,
            identity: upload.identity, incident: incidentID, flags: upload.flags)
        let decoder = LogRecordDecoder(limits: pipeline.configuration.decodeLimits)
        var (records, rejected) = try decodeOrRefuse {
            try decoder.decodeJSON(body: upload.ndjsonLogs, defaults: defaults, receivedAt: now)
        }
        if let text = upload.text {
            let (more, bad) = try decodeOrRefuse { try decoder.decodeText(body: Array(text.utf8), defaults: defaults, receivedAt: now) }
            records += more
            rejected += bad
        }
        let registered = pipeline.registry.flags(for: upload.appId)
        let decision = PrivacyDecision.resolve(record: upload.flags, registry: registered, userInitiated: true)
        guard case .store(let env) = decision else {
            throw APIError.badRequest("invalid_upload", "diagnostic upload could not be routed")
        }
        // Every record of the upload follows the upload's own routing (it is one incident).
        for i in records.indices { records[i].flags = upload.flags }
        // The store sets the record count and time window from what it actually stores.
        let incident = Incident(
            id: incidentID, guid: guid, env: env, appId: upload.appId, deviceId: upload.deviceId,
            sessionId: upload.sessionId, identity: upload.identity, description: upload.description,
            createdAt: now, recordCount: 0, firstTime: nil, lastTime: nil)
        var result = try await store {
            try await pipeline.ingest(
                records, rejected: rejected, kind: .log, receivedAt: now, caller: principal, userInitiated: true, incident: incident)
        }
        result.incident = (incidentID, guid)
        pipeline.metrics.incidentCreated(env: env)
        return .json(result.encode(serverTime: now), status: .created)
    }

    /// Maps request-level limit errors to a 413 naming the limit.
    func decodeOrRefuse<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as RequestLimitError {
            let status: HTTPResponse.Status = error.limit == "maxRecordsPerRequest" ? .contentTooLarge : .badRequest
            throw APIError(status, code: error.limit == "maxRecordsPerRequest" ? "too_many_records" : "missing_parameter", message: error.message)
        }
    }

    /// Maps store failures to retry-later answers: the client keeps the data and resends.
    func store(_ body: () async throws -> IngestResult) async throws -> IngestResult {
        do {
            return try await body()
        } catch let error as StoreError {
            throw APIError.unavailable("the store cannot take writes right now (\(error)); retry later", retryAfter: 5)
        } catch let error as APIError {
            throw error
        } catch {
            pipeline.logger.error("ingest commit failed", metadata: ["error": "\(error)"])
            throw APIError.unavailable("the store failed to commit (\(error)); nothing was acknowledged, retry later", retryAfter: 5)
        }
    }
}
