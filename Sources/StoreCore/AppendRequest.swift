public import TelemetryModel

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
