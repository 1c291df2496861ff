import ControlState
import HTTPTypes
import Hummingbird
import OTLP
import TelemetryModel

/// `POST /v1/logs` in the OpenTelemetry dialect: an OTLP/HTTP exporter pointed at the
/// daemon's base URL posts here. The ingest pipeline decodes the records with the `OTLP`
/// library and stores them the native way (app binding, rate limit, flags, PPE routing,
/// dedupe, one durable commit for logs and events, journal mirror); only the answers
/// differ, in OTLP/HTTP's shape.
extension IngestRoutes {
    func otlpLogs(_ body: [UInt8], encoding: OTLPEncoding, principal: Token?, budget: InFlightReservation) async throws -> Response {
        let result: IngestResult
        do {
            result = try await pipeline.otlpLogs(body, encoding: encoding, caller: principal, budget: budget)
        } catch {
            throw OTLPRefusal(error.apiError, encoding: encoding)
        }
        var headers = result.killSwitchHeaders
        headers[.contentType] = encoding.contentType
        let answer = OTLPAnswer.success(rejected: result.rejected, warning: result.otlpWarning, encoding: encoding)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer)))
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
