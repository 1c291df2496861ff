import ControlState
import Logging
import StoreCore
import Systemd
import TelemetryModel

/// The path every ingest request takes once its body is read: undo Content-Encoding, decode
/// the records, enforce the caller's app binding and rate limit, apply the privacy flags
/// (`PrivacyRouting`), store durably (all kinds and environments or none), then hand log
/// records to the journal mirror. Nothing is written, mirrored or counted per app for a
/// record dropped by `MAMTelemetryDisabled`: the decision is taken before any of that.
///
/// It knows no HTTP: routes hand it bytes and plain header values and get an
/// `IngestResult` back, or an `IngestRefusal` that `IngestRefusal+HTTP` turns into the answer.
struct IngestPipeline: Sendable {
    let store: any RecordStore
    let registry: AppRegistry
    let clock: any WallClock
    let mirror: any LogRecordMirror
    let configuration: ServerConfiguration
    /// The reloadable settings (the kill-switch duration is read per answer).
    let settings: LiveSettings
    let rateLimiter: TokenRateLimiter
    let drops: DropCounter
    let metrics: IngestMetrics
    let logger: Logger
    /// Failed enrollment calls for the journal (one entry per app, code and minute); nil when
    /// the daemon runs without a journal mirror.
    var enrollmentFailures: EnrollmentFailureDigest? = nil

    /// Binds, rate-limits, routes and stores a decoded batch. Every ingest route comes
    /// through here, so the caller's app binding and the privacy flags apply to every record.
    /// A diagnostic upload, which the user chose to share, is kept even when telemetry is
    /// disabled and is not rate-limited; its app is checked by the binding too.
    func store(_ batch: IngestBatch, caller: Token?) async throws(IngestRefusal) -> IngestResult {
        guard let caller else { throw .unauthenticated }
        let userInitiated = batch.upload != nil
        var (records, rejected) = try AppBinding(caller: caller).apply(
            batch.records, rejected: batch.rejected, uploadApp: batch.upload?.appId)
        if !userInitiated { try rateLimiter.take(records.values.reduce(0) { $0 + $1.count }, token: caller) }

        var privacy = PrivacyRouting(registry: registry)
        var incident: Incident?
        if let upload = batch.upload {
            guard case .store(let env) = privacy.decide(upload.flags, appId: upload.appId, userInitiated: true) else {
                throw .invalidUpload(detail: "diagnostic upload could not be routed")
            }
            incident = upload.incident(in: env, createdAt: batch.receivedAt)
            // Every record of the upload follows the upload's own routing (it is one incident).
            for kind in records.keys { for i in records[kind]!.indices { records[kind]![i].flags = upload.flags } }
        }
        var result = IngestResult()
        result.rejected = rejected
        var byKind: [RecordKind: [TelemetryEnvironment: [DecodedRecord]]] = [:]
        for (kind, list) in records {
            let routed = privacy.route(list, userInitiated: userInitiated)
            byKind[kind] = routed.byEnv
            // One incident, one environment (an upload drops nothing): a record naming another
            // app, which the registry may route elsewhere, is still part of what the user shared.
            if let env = incident?.env { byKind[kind] = list.isEmpty ? [:] : [env: list] }
            result.dropped.merge(routed.dropped, uniquingKeysWith: +)
            result.killedApps.formUnion(routed.killedApps)
            drops.dropped(.telemetryDisabled, kind: kind, byApp: routed.optedOutByApp, receivedAt: batch.receivedAt)
        }
        drops.rejected(rejected.count, kind: batch.rejectedKind, reason: "invalid", receivedAt: batch.receivedAt)

        // One append for the whole request: stored in every kind and environment or in none.
        // A diagnostic upload with no records still creates its incident (the user's note).
        let outcomes = try await append(AppendRequest(receivedAt: batch.receivedAt, records: byKind, incident: incident))
        for env in TelemetryEnvironment.allCases {
            for kind in RecordKind.allCases {
                guard let outcome = outcomes[env, kind] else { continue }
                stored(outcome, of: byKind[kind]?[env] ?? [], kind: kind, env: env, receivedAt: batch.receivedAt, into: &result)
            }
        }
        if !result.killedApps.isEmpty { result.killSwitchSeconds = settings.current.killSwitchSeconds }
        if let upload = batch.upload, let env = incident?.env {
            result.incident = (upload.id, upload.guid)
            metrics.incidentCreated(env: env)
        }
        result.serverTime = clock.nowMilliseconds()
        return result
    }

    /// Counts what one kind's share of an environment did, and mirrors the logs stored now
    /// (a retried duplicate was mirrored the first time).
    private func stored(
        _ outcome: AppendOutcome, of list: [DecodedRecord], kind: RecordKind, env: TelemetryEnvironment, receivedAt: Int64,
        into result: inout IngestResult
    ) {
        result.accepted += outcome.stored
        result.env[env, default: 0] += outcome.stored
        result.dropped[.duplicate, default: 0] += outcome.duplicates
        metrics.accepted(outcome.stored, kind: kind, env: env)
        let duplicatesByApp = outcome.duplicateIndices.reduce(into: [:]) { $0[list[$1].keys.appId, default: 0] += 1 }
        drops.dropped(.duplicate, kind: kind, byApp: duplicatesByApp, receivedAt: receivedAt)
        // Fleet dashboards count the events stored now, not the retried duplicates.
        if kind == .event {
            metrics.domain.recordStored(list, duplicateIndices: outcome.duplicateIndices, env: env)
            metrics.apps?.recordStored(list, duplicateIndices: outcome.duplicateIndices, env: env)
            if let enrollmentFailures, outcome.stored > 0 {
                let skip = Set(outcome.duplicateIndices)
                enrollmentFailures.add(
                    list.indices.lazy.filter { !skip.contains($0) }.map { list[$0].keys }, env: env, receivedAt: receivedAt)
            }
        }
        if kind == .log, outcome.stored > 0 {
            let skip = Set(outcome.duplicateIndices)
            mirror.mirror(skip.isEmpty ? list : list.enumerated().filter { !skip.contains($0.offset) }.map(\.element), env: env)
        }
    }

    /// Store failures are retry-later refusals: the client keeps the data and resends. The
    /// answer says what failed in words (`StoreFailure`); the statement and the rest of the
    /// error go to the daemon's log only.
    private func append(_ request: AppendRequest) async throws(IngestRefusal) -> AppendOutcomes {
        do {
            return try await store.append(request)
        } catch let error as StoreError {
            throw .storeUnavailable(detail: StoreFailure.clientDescription(of: error), transient: true)
        } catch {
            logger.error("ingest commit failed", metadata: ["error": "\(error)"])
            throw .storeUnavailable(detail: StoreFailure.clientDescription(of: error), transient: false)
        }
    }
}
