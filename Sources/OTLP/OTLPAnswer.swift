import Foundation
import SwiftProtobuf
import TelemetryModel

typealias ExportLogsResponse = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceResponse
typealias RPCStatus = Google_Rpc_Status

/// OTLP/HTTP answer bodies, in the encoding of the request they answer.
public enum OTLPAnswer {
    /// How many refusal reasons the partial-success message quotes before "and N more".
    static let quotedReasons = 5

    /// The 200 answer: an `ExportLogsServiceResponse`. `partial_success` is set when records
    /// were refused (their count and reasons, so the exporter logs why and does not resend
    /// them) or, with a count of 0, to warn that records were dropped by policy.
    public static func success(rejected: [LineError], warning: String?, encoding: OTLPEncoding) -> [UInt8] {
        var response = ExportLogsResponse()
        if !rejected.isEmpty {
            response.partialSuccess.rejectedLogRecords = Int64(rejected.count)
            response.partialSuccess.errorMessage = describe(rejected) + (warning.map { "; \($0)" } ?? "")
        } else if let warning {
            response.partialSuccess.errorMessage = warning
        }
        return serialize(response, encoding)
    }

    /// A 4xx/5xx answer: a `google.rpc.Status` with the gRPC code matching the HTTP status.
    public static func status(httpStatus: Int, message: String, encoding: OTLPEncoding) -> [UInt8] {
        var status = RPCStatus()
        status.code = grpcCode(httpStatus: httpStatus)
        status.message = message
        return serialize(status, encoding)
    }

    /// "3 of 10 log records rejected: record 2: ...; record 5: ...".
    static func describe(_ rejected: [LineError]) -> String {
        let quoted = rejected.prefix(quotedReasons).map { "record \($0.line): \($0.error)" }
        var text = "\(rejected.count) log record\(rejected.count == 1 ? "" : "s") rejected: " + quoted.joined(separator: "; ")
        if rejected.count > quotedReasons { text += "; and \(rejected.count - quotedReasons) more" }
        return text
    }

    /// The gRPC status code OTLP/HTTP pairs with an HTTP status (the gRPC-HTTP mapping).
    static func grpcCode(httpStatus: Int) -> Int32 {
        switch httpStatus {
        case 400: 3  // INVALID_ARGUMENT
        case 401: 16  // UNAUTHENTICATED
        case 403: 7  // PERMISSION_DENIED
        case 404: 5  // NOT_FOUND
        case 408, 504: 4  // DEADLINE_EXCEEDED
        case 413, 429, 507: 8  // RESOURCE_EXHAUSTED
        case 415: 3
        case 503: 14  // UNAVAILABLE
        default: httpStatus >= 500 ? 13 : 2  // INTERNAL : UNKNOWN
        }
    }

    static func serialize(_ message: some SwiftProtobuf.Message, _ encoding: OTLPEncoding) -> [UInt8] {
        // Serializing a message built here cannot fail (no required fields, no Any).
        switch encoding {
        case .protobuf: return (try? message.serializedBytes()) ?? []
        case .json: return (try? message.jsonUTF8Bytes()) ?? Array("{}".utf8)
        }
    }
}
