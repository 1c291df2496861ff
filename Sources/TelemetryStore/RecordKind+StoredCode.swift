import TelemetryModel

extension RecordKind {
    /// The `kind` column of `batch` and `event_id`: 0 events, 1 logs.
    var storedCode: Int { self == .event ? 0 : 1 }
}
