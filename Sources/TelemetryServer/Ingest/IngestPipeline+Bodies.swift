import Compression
import ControlState
import Foundation
import OTLP
import TelemetryModel

/// The body formats the ingest routes take, each decoded into an `IngestBatch` and stored.
/// Callers pass the body bytes as read and the header values as plain strings.
extension IngestPipeline {
    /// Undoes the body's Content-Encoding within the decompression limits, reserving every
    /// decompressed byte in the request's in-flight budget as it is produced; each refusal
    /// names its limit.
    func decodeContent(_ wire: [UInt8], contentEncoding: String?, route: String, budget: InFlightReservation) throws(IngestRefusal)
        -> [UInt8]
    {
        let decoded: [UInt8]
        do {
            decoded = try ContentDecoding.decode(
                wire, contentEncoding: contentEncoding, limits: configuration.inflateLimits, reserve: budget.grow(by:))
        } catch let error as CompressionError {
            switch error {
            case .outputLimit, .ratioLimit: throw .decompressedTooLarge(detail: error.description)
            case .unsupportedEncoding: throw .unsupportedEncoding(detail: error.description)
            default: throw .badEncoding(detail: error.description)
            }
        } catch let refusal as IngestRefusal {
            throw refusal
        } catch {
            throw .undecodable(detail: "\(error)")
        }
        metrics.bodyBytes(wire: wire.count, decoded: decoded.count, route: route)
        return decoded
    }

    /// `POST /v1/telemetry`: NDJSON or a JSON array of telemetry events. The native routes
    /// charge their decoded records to the request's in-flight budget before storing them.
    func telemetry(_ body: [UInt8], caller: Token?, budget: InFlightReservation) async throws(IngestRefusal) -> IngestResult {
        let now = clock.nowMilliseconds()
        let decoder = TelemetryEventDecoder(limits: configuration.decodeLimits)
        let (records, rejected) = try whole { try decoder.decode(body: body, receivedAt: now) }
        let batch = IngestBatch(records: [.event: records], rejected: rejected, rejectedKind: .event, receivedAt: now)
        try budget.holdDecoded(batch.heldBytes)
        return try usable(await store(batch, caller: caller), batch)
    }

    /// `POST /v1/logs` in the native shapes: NDJSON / a JSON array of log records, or
    /// console text (`text/plain`); `defaults` fill what the records leave out.
    func logs(_ body: [UInt8], contentType: String?, defaults: LogDefaults, caller: Token?, budget: InFlightReservation)
        async throws(IngestRefusal) -> IngestResult
    {
        let now = clock.nowMilliseconds()
        let decoder = LogRecordDecoder(limits: configuration.decodeLimits)
        let isText = contentType?.lowercased().hasPrefix("text/plain") == true
        let (records, rejected) = try whole {
            isText
                ? try decoder.decodeText(body: body, defaults: defaults, receivedAt: now)
                : try decoder.decodeJSON(body: body, defaults: defaults, receivedAt: now)
        }
        let batch = IngestBatch(records: [.log: records], rejected: rejected, rejectedKind: .log, receivedAt: now)
        try budget.holdDecoded(batch.heldBytes)
        return try usable(await store(batch, caller: caller), batch)
    }

    /// `POST /v1/logs` from an OTLP/HTTP exporter: log records and telemetry events of one
    /// export request, stored together or not at all. What decoding will cost in memory is
    /// charged to the request's in-flight budget before it is decoded (`OTLPDecodeCost`).
    func otlpLogs(_ body: [UInt8], encoding: OTLPEncoding, caller: Token?, budget: InFlightReservation) async throws(IngestRefusal)
        -> IngestResult
    {
        let now = clock.nowMilliseconds()
        let decoder = OTLPLogsDecoder(limits: configuration.decodeLimits)
        let batch = try whole { try decoder.decode(body, encoding: encoding, receivedAt: now, charge: budget.holdDecoded) }
        return try await store(
            IngestBatch(records: [.log: batch.logs, .event: batch.events], rejected: batch.rejected, rejectedKind: .log, receivedAt: now),
            caller: caller)
    }

    /// `POST /v1/diagnostics`: a user's "share logs" upload, stored as one incident.
    func diagnostics(_ body: [UInt8], caller: Token?, budget: InFlightReservation) async throws(IngestRefusal) -> IngestResult {
        let now = clock.nowMilliseconds()
        let upload: DiagnosticUpload
        do {
            upload = try DiagnosticUpload(json: body, limits: configuration.decodeLimits)
        } catch let error as DiagnosticUpload.Invalid {
            throw .invalidUpload(detail: error.message)
        } catch let error as RequestLimitError {
            throw .request(error)
        } catch {
            throw .invalidUpload(detail: "\(error)")
        }
        let incident = UploadIncident(
            id: IncidentID.random().value, guid: UUID().uuidString.lowercased(), appId: upload.appId, deviceId: upload.deviceId,
            sessionId: upload.sessionId, identity: upload.identity, description: upload.description, flags: upload.flags)
        let defaults = LogDefaults(
            appId: upload.appId, deviceId: upload.deviceId, sessionId: upload.sessionId,
            identity: upload.identity, incident: incident.id, flags: upload.flags)
        let decoder = LogRecordDecoder(limits: configuration.decodeLimits)
        var (records, rejected) = try whole { try decoder.decodeJSON(body: upload.logs, defaults: defaults, receivedAt: now) }
        if let text = upload.text {
            let (more, bad) = try whole { try decoder.decodeText(body: Array(text.utf8), defaults: defaults, receivedAt: now) }
            records += more
            rejected += bad
        }
        let batch = IngestBatch(records: [.log: records], rejected: rejected, rejectedKind: .log, receivedAt: now, upload: incident)
        try budget.holdDecoded(batch.heldBytes)
        return try await store(batch, caller: caller)
    }

    /// A decoder's refusal of the request as a whole.
    private func whole<T>(_ decode: () throws -> T) throws(IngestRefusal) -> T {
        do {
            return try decode()
        } catch let error as RequestLimitError {
            throw .request(error)
        } catch let refusal as IngestRefusal {
            throw refusal
        } catch let error as OTLPDecodingError {
            throw .invalidOTLP(detail: error.message)
        } catch {
            throw .undecodable(detail: "\(error)")
        }
    }

    /// A native body none of whose records could be used is refused, with each line's reason.
    private func usable(_ result: IngestResult, _ batch: IngestBatch) throws(IngestRefusal) -> IngestResult {
        guard result.nothingTaken else { return result }
        if !result.rejected.isEmpty { throw .noValidRecords(result) }
        if !batch.decodedAnything { throw .emptyBody }
        return result
    }
}
