import StoreCore
import TelemetryModel

/// How the group committer cuts a request: by environment, then one group per kind. Kept
/// with the SQLite engine because `BatchCommitter.Group` is its unit of work; the
/// request itself names no engine type.
extension AppendRequest {
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
    func groups(for env: TelemetryEnvironment) -> [BatchCommitter.Group] {
        kinds(in: env).map { kind in
            BatchCommitter.Group(
                records: records[kind]?[env] ?? [], kind: kind, receivedAt: receivedAt,
                incident: kind == Self.incidentKind && incident?.env == env ? incident : nil)
        }
    }

    /// An incident holds a diagnostic upload's log records.
    static let incidentKind = RecordKind.log

    var recordCount: Int { records.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } } }
}
