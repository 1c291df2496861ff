import Foundation
import TelemetryModel

/// The two OTLP/HTTP body encodings. An answer (success or `Status`) goes back in the
/// encoding of its request, as OTLP/HTTP clients expect.
public enum OTLPEncoding: Sendable, Hashable {
    case protobuf
    case json

    /// The Content-Type of answers in this encoding.
    public var contentType: String {
        switch self {
        case .protobuf: "application/x-protobuf"
        case .json: "application/json"
        }
    }

    /// What the Content-Type alone says: protobuf is always OTLP on `/v1/logs`; JSON needs a
    /// look at the body (`detect`), because our native records are JSON too.
    public init?(declaredContentType contentType: String?) {
        guard let type = Self.mediaType(contentType), type == "application/x-protobuf" || type == "application/protobuf" else {
            return nil
        }
        self = .protobuf
    }

    /// The request's OTLP encoding, or `nil` when the body is one of our native shapes
    /// (NDJSON records, a JSON array, console text): protobuf by Content-Type, JSON when an
    /// `application/json` body is an object with a top-level `resourceLogs` member.
    public static func detect(contentType: String?, body: [UInt8]) -> OTLPEncoding? {
        if let declared = OTLPEncoding(declaredContentType: contentType) { return declared }
        guard mediaType(contentType) == "application/json" else { return nil }
        return JSONMemberProbe.topLevelObject(body, hasMember: "resourceLogs") ? .json : nil
    }

    /// The media type without parameters (`; charset=utf-8`), lower-cased.
    static func mediaType(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }
}
