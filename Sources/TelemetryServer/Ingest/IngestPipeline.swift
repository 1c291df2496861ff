import Compression
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Logging
import TelemetryModel
import TelemetryStore

/// The path every ingest request takes after decoding: enforce the caller's app binding,
/// apply the privacy flags, route by environment, store durably (all environments or
/// none), then (for logs) hand the records to the journal mirror. Nothing is written,
/// mirrored or counted per app for a record dropped by `MAMTelemetryDisabled`: the
/// decision is taken before any of that.
struct IngestPipeline: Sendable {
    let store: any RecordStore
    let registry: AppRegistry
    let clock: any WallClock
    let mirror: any LogRecordMirror
    let configuration: ServerConfiguration
    /// The reloadable settings (the kill-switch duration is read per answer).
    let settings: LiveSettings
    let drops: DropCounter
    let metrics: IngestMetrics
    let logger: Logger

    /// Reads the body within `maxBodyBytes` and undoes its Content-Encoding within the
    /// decompression limits, reserving every decompressed byte in the request's in-flight
    /// budget as it is produced; each refusal names its limit.
    func readBody(_ request: Request, route: String, budget: InFlightReservation) async throws -> [UInt8] {
        let limit = configuration.maxBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(.contentTooLarge, code: "body_too_large", message: "request body of \(length) bytes exceeds the limit maxBodyBytes=\(limit)")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, code: "body_too_large", message: "request body exceeds the limit maxBodyBytes=\(limit)")
        }
        let wire = [UInt8](buffer: buffer)
        let decoded: [UInt8]
        do {
            decoded = try ContentDecoding.decode(
                wire, contentEncoding: request.headers[.contentEncoding], limits: configuration.inflateLimits,
                reserve: budget.grow(by:))
        } catch let error as CompressionError {
            switch error {
            case .outputLimit, .ratioLimit:
                throw APIError(.contentTooLarge, code: "decompressed_too_large", message: error.description)
            case .unsupportedEncoding:
                throw APIError(.unsupportedMediaType, code: "unsupported_encoding", message: error.description)
            default:
                throw APIError.badRequest("bad_encoding", error.description)
            }
        }
        metrics.bodyBytes(wire: wire.count, decoded: decoded.count, route: route)
        return decoded
    }

    /// Binds, routes and stores decoded records. Every ingest route comes through here, so
    /// the caller's app binding is enforced for every record (`AppBinding`). `userInitiated`
    /// marks a diagnostic upload, which the user chose to share: kept even when telemetry is
    /// disabled; its `incident` names the upload's app, which the binding checks too.
    func ingest(
        _ decoded: [DecodedRecord], rejected invalid: [LineError], kind: RecordKind, receivedAt: Int64, caller: Token?,
        userInitiated: Bool = false, incident: Incident? = nil
    ) async throws -> IngestResult {
        guard let caller else {
            throw APIError(.unauthorized, code: "unauthenticated", message: "ingest needs a caller: send Authorization: Bearer <token>")
        }
        let (records, rejected) = try AppBinding(caller: caller).apply(decoded, rejected: invalid, uploadApp: incident?.appId)
        var result = IngestResult()
        result.rejected = rejected
        var byEnv: [TelemetryEnvironment: [DecodedRecord]] = [:]
        var registryCache: [String: AppFlags?] = [:]
        var optedOutByApp: [String: Int] = [:]
        for record in records {
            let appId = record.keys.appId
            let registered: AppFlags?
            if let cached = registryCache[appId] {
                registered = cached
            } else {
                registered = registry.flags(for: appId)
                registryCache[appId] = registered
            }
            if registered?.telemetryDisabled == true { result.killedApps.insert(appId) }
            switch PrivacyDecision.resolve(record: record.flags, registry: registered, userInitiated: userInitiated) {
            case .store(let env): byEnv[env, default: []].append(record)
            case .drop(let reason):
                result.dropped[reason, default: 0] += 1
                optedOutByApp[appId, default: 0] += 1
            }
        }
        drops.rejected(rejected.count, kind: kind, reason: "invalid", receivedAt: receivedAt)
        drops.dropped(.telemetryDisabled, kind: kind, byApp: optedOutByApp, receivedAt: receivedAt)

        // One append for the whole request: stored in every environment or in none. A
        // diagnostic upload with no records still creates its incident (the user's note).
        let outcomes = try await store.append(AppendRequest(kind: kind, receivedAt: receivedAt, records: byEnv, incident: incident))
        for env in TelemetryEnvironment.allCases {
            guard let outcome = outcomes[env] else { continue }
            let list = byEnv[env] ?? []
            result.accepted += outcome.stored
            result.env[env] = outcome.stored
            result.ids += outcome.ids
            result.dropped[.duplicate, default: 0] += outcome.duplicates
            metrics.accepted(outcome.stored, kind: kind, env: env)
            drops.dropped(.duplicate, kind: kind, byApp: outcome.duplicateIndices.reduce(into: [:]) { $0[list[$1].keys.appId, default: 0] += 1 }, receivedAt: receivedAt)
            // Fleet dashboards count the events stored now, not the retried duplicates.
            if kind == .event { metrics.domain.recordStored(list, duplicateIndices: outcome.duplicateIndices, env: env) }
            if kind == .log, outcome.stored > 0 {
                // Mirror only what was stored now: a retried duplicate was mirrored the first time.
                let skip = Set(outcome.duplicateIndices)
                mirror.mirror(skip.isEmpty ? list : list.enumerated().filter { !skip.contains($0.offset) }.map(\.element), env: env)
            }
        }
        return result
    }
}

extension IngestPipeline {
    /// The HTTP answer: 200 with the counts, or 400 when nothing in the body was usable.
    func respond(_ result: IngestResult, decodedAnything: Bool) throws -> Response {
        let now = clock.nowMilliseconds()
        let headers = killSwitchHeaders(for: result)
        let nothingTaken = result.accepted == 0 && result.dropped.values.reduce(0, +) == 0
        if nothingTaken && !result.rejected.isEmpty {
            var error = APIError.badRequest(
                "no_valid_records",
                "none of the \(result.rejected.count) records could be used; see 'rejected' for each line's reason")
            let body = result.encode(serverTime: now)
            // Reuse the counts object's members beside the error.
            error.extraMembers = Array(body.dropFirst().dropLast(2))
            error.headers = headers
            throw error
        }
        if nothingTaken && !decodedAnything {
            throw APIError.badRequest("empty_body", "the request body holds no records")
        }
        return .json(result.encode(serverTime: now), headers: headers)
    }
}
