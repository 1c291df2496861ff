import TelemetryModel

/// Everything one ingest request asks the store to keep, split by kind and environment. The
/// store commits it all or nothing, across kinds and environments: a client that gets an
/// error resends the whole request, so no part of it may already be stored. (An OTLP export
/// carries log records and telemetry events in one request.)
public struct AppendRequest: Sendable {
    public var receivedAt: Int64
    public var records: [RecordKind: [TelemetryEnvironment: [DecodedRecord]]]
    /// A diagnostic upload's incident, created in the same transaction as its records. An
    /// upload is routed as one unit, so its records are all logs in `incident.env`.
    public var incident: Incident?

    public init(
        receivedAt: Int64, records: [RecordKind: [TelemetryEnvironment: [DecodedRecord]]], incident: Incident? = nil
    ) {
        self.receivedAt = receivedAt
        self.records = records
        self.incident = incident
    }

    /// A request of one kind.
    public init(
        kind: RecordKind, receivedAt: Int64, records: [TelemetryEnvironment: [DecodedRecord]], incident: Incident? = nil
    ) {
        self.init(receivedAt: receivedAt, records: [kind: records], incident: incident)
    }

    /// The environments the request writes to: those with records, and the incident's.
    var environments: [TelemetryEnvironment] {
        TelemetryEnvironment.allCases.filter { env in
            incident?.env == env || records.values.contains { $0[env]?.isEmpty == false }
        }
    }

    /// The kinds the request stores in `env`, in the order their groups are written.
    func kinds(in env: TelemetryEnvironment) -> [RecordKind] {
        RecordKind.allCases.filter { kind in
            records[kind]?[env]?.isEmpty == false || (kind == Self.incidentKind && incident?.env == env)
        }
    }

    /// One environment's share, one group per kind, as the committer writes it in one
    /// transaction (`kinds(in:)` order).
    func groups(for env: TelemetryEnvironment) -> [EnvironmentDatabase.Group] {
        kinds(in: env).map { kind in
            EnvironmentDatabase.Group(
                records: records[kind]?[env] ?? [], kind: kind, receivedAt: receivedAt,
                incident: kind == Self.incidentKind && incident?.env == env ? incident : nil)
        }
    }

    /// An incident holds a diagnostic upload's log records.
    static let incidentKind = RecordKind.log

    var recordCount: Int { records.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } } }
}

/// What the store did with an `AppendRequest`: one outcome per environment and kind written.
public struct AppendOutcomes: Sendable, Hashable {
    public var byEnvironment: [TelemetryEnvironment: [RecordKind: AppendOutcome]] = [:]

    public init(byEnvironment: [TelemetryEnvironment: [RecordKind: AppendOutcome]] = [:]) {
        self.byEnvironment = byEnvironment
    }

    public subscript(env: TelemetryEnvironment, kind: RecordKind) -> AppendOutcome? {
        byEnvironment[env]?[kind]
    }
}
