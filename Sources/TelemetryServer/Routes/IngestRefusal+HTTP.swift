import HTTPTypes
import Hummingbird
import TelemetryModel

/// The one mapping from an ingest refusal to its HTTP answer: status, error code, message
/// naming the limit or field, and headers (`Retry-After` on every retry-later answer, so
/// clients keep the data and resend). OTLP requests get the same refusal in OTLP's shape
/// (`OTLPRefusal`).
extension IngestRefusal {
    var apiError: APIError {
        switch self {
        case .unauthenticated:
            return APIError(.unauthorized, code: "unauthenticated", message: "ingest needs a caller: send Authorization: Bearer <token>")
        case .bodyTooLarge(let declared, let limit):
            let size = declared.map { "request body of \($0) bytes" } ?? "request body"
            return APIError(.contentTooLarge, code: "body_too_large", message: "\(size) exceeds the limit maxBodyBytes=\(limit)")
        case .decompressedTooLarge(let detail):
            return APIError(.contentTooLarge, code: "decompressed_too_large", message: detail)
        case .unsupportedEncoding(let detail):
            return APIError(.unsupportedMediaType, code: "unsupported_encoding", message: detail)
        case .badEncoding(let detail):
            return .badRequest("bad_encoding", detail)
        case .undecodable(let detail):
            return .badRequest("invalid_body", detail)
        case .request(let error):
            switch error {
            case .tooManyRecords: return APIError(.contentTooLarge, code: "too_many_records", message: error.message)
            case .missingParameter: return .badRequest("missing_parameter", error.message)
            case .outerObject: return APIError(.contentTooLarge, code: "upload_too_large", message: error.message)
            case .tooManyValues: return APIError(.contentTooLarge, code: "too_many_values", message: error.message)
            }
        case .invalidOTLP(let detail):
            return .badRequest("invalid_otlp", detail)
        case .invalidUpload(let detail):
            return .badRequest("invalid_upload", detail)
        case .appNotAllowed(let token, let apps):
            return APIError(
                .forbidden, code: "app_not_allowed", message: "token '\(token)' may only post for \(apps.joined(separator: ", "))")
        case .rateLimited(let token, let rate, let wait):
            return APIError(
                .tooManyRequests, code: "rate_limited",
                message: "token '\(token)' is over its ingest rate limit perTokenRecordsPerSecond=\(rate); retry later",
                headers: [.retryAfter: String(wait)])
        case .storageFull(let detail):
            return APIError(
                HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), code: "storage_full", message: detail,
                headers: [.retryAfter: "60"])
        case .queueFull(let limit):
            return .unavailable("the commit queue holds more than maxQueuedRecords=\(limit) records; retry later", retryAfter: 1)
        case .spoolFull(let limit, let waiting):
            return .unavailable(
                "ClickHouse is behind: the spool holds \(waiting) bytes, more than clickhouse.spoolMaxBytes=\(limit); retry later",
                retryAfter: 5)
        case .inFlightFull(let limit, .atTheDoor):
            return .unavailable("ingest is at its in-flight limit maxInFlightBytes=\(limit); retry later", retryAfter: 1)
        case .inFlightFull(let limit, .inflating):
            return .unavailable(
                "the decompressed body would take ingest past its in-flight limit maxInFlightBytes=\(limit); nothing was stored, retry later",
                retryAfter: 1)
        case .inFlightFull(let limit, .decoded):
            return .unavailable(
                "the decoded records would take ingest past its in-flight limit maxInFlightBytes=\(limit); nothing was stored, retry later",
                retryAfter: 1)
        case .storeUnavailable(let detail, transient: true):
            return .unavailable("the store cannot take writes right now (\(detail)); retry later", retryAfter: 5)
        case .storeUnavailable(let detail, transient: false):
            return .unavailable("the store failed to commit (\(detail)); nothing was acknowledged, retry later", retryAfter: 5)
        case .noValidRecords(let result):
            var error = APIError.badRequest(
                "no_valid_records",
                "none of the \(result.rejected.count) records could be used; see 'rejected' for each line's reason")
            // The counts beside the error, so the client sees each line's reason.
            error.extraMembers = { result.writeMembers(to: &$0) }
            error.headers = result.killSwitchHeaders
            return error
        case .emptyBody:
            return .badRequest("empty_body", "the request body holds no records")
        }
    }
}

extension IngestResult {
    /// The 1DS kill switch: apps the registry marks opted-out stop sending for a while.
    var killSwitchHeaders: HTTPFields {
        var headers: HTTPFields = [:]
        if !killedApps.isEmpty {
            headers[HTTPField.Name("Kill-Tokens")!] = killedApps.sorted().joined(separator: ",")
            headers[HTTPField.Name("Kill-Duration")!] = String(killSwitchSeconds)
        }
        return headers
    }
}
