import Foundation
import SwiftProtobuf
import TelemetryModel

typealias ExportLogsRequest = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest

/// What an OTLP export request holds, as native records ready for the ingest pipeline.
/// `line` of every record and refusal is the record's 1-based position in the request
/// (resource by resource, scope by scope), so a refusal can be traced back to its record.
public struct OTLPBatch: Sendable {
    /// Diagnostic log records (stored, mirrored to the journal).
    public var logs: [DecodedRecord] = []
    /// Records named `AppLaunch`, `EnrollmentCall` or `IntuneAction`: telemetry events.
    public var events: [DecodedRecord] = []
    /// Records that could not be taken, with the reason.
    public var rejected: [LineError] = []
    /// Log records in the request.
    public var recordCount = 0
}

/// The body is not an OTLP export request in its declared encoding: OTLP/HTTP answers 400
/// and the exporter does not retry.
public struct OTLPDecodingError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Decodes `POST /v1/logs` OTLP bodies (protobuf or JSON) into native records. It maps each
/// OTLP record to the native record JSON (`RecordMapping`) and reads that with the native
/// decoders, so field rules and the depth / field-count / string / line limits are the ones
/// every NDJSON record meets; the record-count limit applies to the request as a whole.
public struct OTLPLogsDecoder: Sendable {
    public var limits: DecodeLimits

    public init(limits: DecodeLimits = .default) { self.limits = limits }

    /// `charge` is told the memory decoding will take (`OTLPDecodeCost`), as it is counted and
    /// before anything is decoded, and may throw to refuse the request.
    public func decode(
        _ body: [UInt8], encoding: OTLPEncoding, receivedAt: Int64, charge: @escaping (Int) throws -> Void = { _ in }
    ) throws -> OTLPBatch {
        try OTLPDecodeCost.charge(body, encoding: encoding, limits: limits, to: charge)
        let request = try parse(body, encoding: encoding)
        let total = request.resourceLogs.reduce(0) { sum, r in r.scopeLogs.reduce(sum) { $0 + $1.logRecords.count } }
        if total > limits.maxRecordsPerRequest {
            throw RequestLimitError.tooManyRecords(
                limit: limits.maxRecordsPerRequest, held: total,
                advice: "export smaller batches (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE)")
        }

        // Map every record to one native NDJSON line per kind, remembering each line's record.
        let mapping = RecordMapping(encoding: encoding)
        var batch = OTLPBatch(recordCount: total)
        var logLines = NativeLines()
        var eventLines = NativeLines()
        var position = 0
        for resourceLogs in request.resourceLogs {
            let resource = ResourceContext(resourceLogs.resource)
            for scopeLogs in resourceLogs.scopeLogs {
                for record in scopeLogs.logRecords {
                    position += 1
                    switch mapping.map(record, resource: resource, scopeName: scopeLogs.scope.name) {
                    case .log(let json): logLines.append(json, record: position)
                    case .event(let json): eventLines.append(json, record: position)
                    case .refused(let reason): batch.rejected.append(LineError(line: position, error: reason))
                    }
                }
            }
        }

        // The native decoders: the same rules and limits as records posted as NDJSON.
        if !logLines.isEmpty {
            let (records, refused) = try LogRecordDecoder(limits: limits).decodeJSON(
                body: logLines.body, defaults: LogDefaults(), receivedAt: receivedAt)
            batch.logs = logLines.renumber(records)
            batch.rejected += logLines.renumber(refused)
        }
        if !eventLines.isEmpty {
            let (records, refused) = try TelemetryEventDecoder(limits: limits).decode(body: eventLines.body, receivedAt: receivedAt)
            batch.events = eventLines.renumber(records)
            batch.rejected += eventLines.renumber(refused)
        }
        batch.rejected.sort { $0.line < $1.line }
        return batch
    }

    /// The export request. Nesting is bounded by the decoders' own depth limit, set so a
    /// record within `maxDepth` always decodes (one JSON level is three protobuf messages:
    /// AnyValue, KeyValueList, KeyValue) and a deeper one is refused by the native scanner
    /// with its limit named; only absurd nesting fails the whole request.
    func parse(_ body: [UInt8], encoding: OTLPEncoding) throws -> ExportLogsRequest {
        let depth = Self.messageDepth(limits)
        do {
            switch encoding {
            case .protobuf:
                var options = BinaryDecodingOptions()
                options.messageDepthLimit = depth
                options.discardUnknownFields = true
                return try ExportLogsRequest(serializedBytes: body, options: options)
            case .json:
                // OTLP/HTTP: receivers ignore fields they do not know (newer exporters).
                var options = JSONDecodingOptions()
                options.messageDepthLimit = depth
                options.ignoreUnknownFields = true
                return try ExportLogsRequest(jsonUTF8Bytes: body, options: options)
            }
        } catch {
            let what = encoding == .protobuf ? "protobuf" : "JSON"
            throw OTLPDecodingError(message: "the body is not an OTLP ExportLogsServiceRequest in \(what) (\(error))")
        }
    }
}

extension OTLPLogsDecoder {
    /// The deepest message nesting a request may have (see `parse`).
    static func messageDepth(_ limits: DecodeLimits) -> Int { max(100, 3 * limits.maxDepth + 16) }
}

/// Native NDJSON built from mapped records, and the record position of each line.
struct NativeLines {
    private(set) var body: [UInt8] = []
    private var positions: [Int] = []

    var isEmpty: Bool { positions.isEmpty }

    mutating func append(_ json: [UInt8], record position: Int) {
        body.append(contentsOf: json)
        body.append(0x0A)
        positions.append(position)
    }

    /// Native line numbers (1-based NDJSON lines) back to record positions.
    func renumber(_ records: [DecodedRecord]) -> [DecodedRecord] {
        records.map { r in
            var r = r
            r.line = positions[r.line - 1]
            return r
        }
    }

    func renumber(_ errors: [LineError]) -> [LineError] {
        errors.map { LineError(line: positions[$0.line - 1], error: $0.error) }
    }
}
