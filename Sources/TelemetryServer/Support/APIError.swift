import Foundation
public import HTTPTypes
public import Hummingbird
public import TelemetryModel

/// An API refusal in the one error shape every route answers with: `{"error": {"code": "...", "message": "..."}}`,
/// with extra members (e.g. the rejected lines) and headers such as `Retry-After`.
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var headers: HTTPFields = [:]
    /// Writes members beside `error` (e.g. an ingest answer's `rejected` lines).
    public var extraMembers: (@Sendable (inout JSONWriter) -> Void)?

    public init(_ status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var w = JSONWriter()
        w.beginObject()
        w.key("error")
        w.beginObject()
        w.field("code", code)
        w.field("message", message)
        w.endObject()
        extraMembers?(&w)
        w.endObject()
        var bytes = w.bytes
        bytes.append(0x0A)
        var headers = self.headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func badRequest(_ code: String, _ message: String) -> APIError { APIError(.badRequest, code: code, message: message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, code: "not_found", message: message) }
}

extension APIError {
    /// A store that cannot take the write right now: retry later (1DS convention).
    static func unavailable(_ message: String, retryAfter: Int) -> APIError {
        APIError(.serviceUnavailable, code: "unavailable", message: message, headers: [.retryAfter: String(retryAfter)])
    }
}
