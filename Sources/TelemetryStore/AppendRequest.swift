import TelemetryModel

/// Everything one ingest request asks the store to keep, split by environment. The store
/// commits it all or nothing across environments: a client that gets an error resends the
/// whole request, so no part of it may already be stored.
public struct AppendRequest: Sendable {
    public var kind: RecordKind
    public var receivedAt: Int64
    public var records: [TelemetryEnvironment: [DecodedRecord]]
    /// A diagnostic upload's incident, created in the same transaction as its records. An
    /// upload is routed as one unit, so its records are all in `incident.env`.
    public var incident: Incident?

    public init(
        kind: RecordKind, receivedAt: Int64, records: [TelemetryEnvironment: [DecodedRecord]], incident: Incident? = nil
    ) {
        self.kind = kind
        self.receivedAt = receivedAt
        self.records = records
        self.incident = incident
    }

    /// The environments the request writes to: those with records, and the incident's.
    var environments: [TelemetryEnvironment] {
        TelemetryEnvironment.allCases.filter { records[$0]?.isEmpty == false || incident?.env == $0 }
    }

    /// One environment's share, as the committer writes it.
    func group(for env: TelemetryEnvironment) -> EnvironmentDatabase.Group {
        EnvironmentDatabase.Group(
            records: records[env] ?? [], kind: kind, receivedAt: receivedAt, incident: incident?.env == env ? incident : nil)
    }
}
