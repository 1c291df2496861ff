import StoreCore
import TelemetryModel

/// What one request's body decoded to, on its way to the store: the usable records by kind,
/// the lines refused while decoding, and how the request is treated.
struct IngestBatch: Sendable {
    var records: [RecordKind: [DecodedRecord]]
    var rejected: [LineError]
    /// The kind the refused lines were meant to be (refusals are counted per kind).
    var rejectedKind: RecordKind
    var receivedAt: Int64
    /// A diagnostic upload the user chose to share, with its incident; nil for telemetry.
    var upload: UploadIncident?

    /// The memory the decoded records hold (`DecodedRecord.heldBytes`).
    var heldBytes: Int { records.values.reduce(0) { total, list in list.reduce(total) { $0 + $1.heldBytes } } }

    /// True when the body held anything at all, usable or not.
    var decodedAnything: Bool { !rejected.isEmpty || records.values.contains { !$0.isEmpty } }
}

/// A diagnostic upload's incident before it is routed: the pipeline decides its
/// environment from the upload's flags like any record's, and creates it with the records.
struct UploadIncident: Sendable {
    var id: String
    var guid: String
    var appId: String
    var deviceId: String?
    var sessionId: String?
    var identity: String?
    var description: String?
    var flags: AppFlags

    func incident(in env: TelemetryEnvironment, createdAt: Int64) -> Incident {
        // The store sets the record count and time window from what it actually stores.
        Incident(
            id: id, guid: guid, env: env, appId: appId, deviceId: deviceId, sessionId: sessionId, identity: identity,
            description: description, createdAt: createdAt, recordCount: 0, firstTime: nil, lastTime: nil)
    }
}
