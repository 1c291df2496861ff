import HTTPTypes
import Hummingbird
import OTLP
import TelemetryModel
import TelemetryStore

/// `POST /v1/logs` in the OpenTelemetry dialect: an OTLP/HTTP exporter pointed at the
/// daemon's base URL posts here. The records are decoded by the `OTLP` library and then take
/// the native path (app binding, rate limit, ingest pipeline: flags, PPE routing, dedupe,
/// durable commit, journal mirror); only the answers differ, in OTLP/HTTP's shape.
extension IngestRoutes {
    func otlpLogs(_ body: [UInt8], encoding: OTLPEncoding, principal: Token?) async throws -> Response {
        do {
            let now = pipeline.clock.nowMilliseconds()
            let batch: OTLPBatch
            do {
                batch = try decodeOrRefuse {
                    try OTLPLogsDecoder(limits: pipeline.configuration.decodeLimits).decode(body, encoding: encoding, receivedAt: now)
                }
            } catch let error as OTLPDecodingError {
                throw APIError.badRequest("invalid_otlp", error.message)
            }
            guard let principal else {
                throw APIError(.unauthorized, code: "unauthenticated", message: "ingest needs a caller: send Authorization: Bearer <token>")
            }
            // Bound once over the whole request, so a request whose logs are all another
            // app's but whose events are allowed is not refused whole by the first commit.
            let (kept, rejected) = try AppBinding(caller: principal).apply(batch.logs + batch.events, rejected: batch.rejected, uploadApp: nil)
            try rateLimiter.take(kept.count, token: principal)
            let eventRecords = Set(batch.events.map(\.line))
            let logs = kept.filter { !eventRecords.contains($0.line) }
            let events = kept.filter { eventRecords.contains($0.line) }
            var result = try await store { try await pipeline.ingest(logs, rejected: rejected, kind: .log, receivedAt: now, caller: principal) }
            if !events.isEmpty {
                result.absorb(try await store { try await pipeline.ingest(events, rejected: [], kind: .event, receivedAt: now, caller: principal) })
            }
            var headers = pipeline.killSwitchHeaders(for: result)
            headers[.contentType] = encoding.contentType
            let answer = OTLPAnswer.success(rejected: result.rejected, warning: result.otlpWarning, encoding: encoding)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer)))
        } catch let error as APIError {
            throw OTLPRefusal(error, encoding: encoding)
        }
    }

    /// Refusals of a request whose Content-Type already says OTLP protobuf (admission, body
    /// size, Content-Encoding) are answered as OTLP `Status` too: the exporter cannot read
    /// our JSON error. A JSON body is known to be OTLP only once read; before that its
    /// refusals keep the daemon's JSON error shape.
    func otlpAnswering(_ request: Request, _ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as APIError {
            guard let encoding = OTLPEncoding(declaredContentType: request.headers[.contentType]) else { throw error }
            throw OTLPRefusal(error, encoding: encoding)
        }
    }
}

/// An ingest refusal answered the OTLP/HTTP way: a `google.rpc.Status` in the request's
/// encoding, with the refusal's status and headers (`Retry-After`). Storage high-water (507)
/// becomes 503: exporters retry only 429/502/503/504, and a full disk is a "later", not a
/// "never" — the data must stay queued at the exporter, not be dropped there.
struct OTLPRefusal: HTTPResponseError {
    let error: APIError
    let encoding: OTLPEncoding

    init(_ error: APIError, encoding: OTLPEncoding) {
        self.error = error
        self.encoding = encoding
    }

    var status: HTTPResponse.Status { error.status.code == 507 ? .serviceUnavailable : error.status }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = error.headers
        headers[.contentType] = encoding.contentType
        let body = OTLPAnswer.status(httpStatus: status.code, message: "\(error.code): \(error.message)", encoding: encoding)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension IngestResult {
    /// Adds the outcome of a second commit of the same request (its events after its logs).
    mutating func absorb(_ other: IngestResult) {
        accepted += other.accepted
        rejected += other.rejected
        dropped.merge(other.dropped, uniquingKeysWith: +)
        env.merge(other.env, uniquingKeysWith: +)
        ids += other.ids
        killedApps.formUnion(other.killedApps)
    }

    /// What an OTLP exporter should know about records taken but not stored: OTLP has no
    /// field for them (they are not "rejected": resending would not help), so they are a
    /// warning in `partial_success.error_message`.
    var otlpWarning: String? {
        var parts: [String] = []
        if let n = dropped[.telemetryDisabled], n > 0 {
            parts.append("\(n) log record\(n == 1 ? "" : "s") dropped: the app opted out of telemetry (MAMTelemetryDisabled)")
        }
        if let n = dropped[.duplicate], n > 0 {
            parts.append("\(n) log record\(n == 1 ? "" : "s") already stored (same log.record.uid), not stored twice")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}

extension IngestPipeline {
    /// The 1DS kill switch: apps the registry marks opted-out stop sending for a while.
    func killSwitchHeaders(for result: IngestResult) -> HTTPFields {
        var headers: HTTPFields = [:]
        if !result.killedApps.isEmpty {
            headers[HTTPField.Name("Kill-Tokens")!] = result.killedApps.sorted().joined(separator: ",")
            headers[HTTPField.Name("Kill-Duration")!] = String(settings.current.killSwitchSeconds)
        }
        return headers
    }
}
