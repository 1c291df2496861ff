public import TelemetryModel

/// Where accepted diagnostic log records are mirrored after they are durable (the systemd
/// journal in the daemon). A protocol so the ingest pipeline does not depend on journald
/// and tests can observe what would be mirrored.
public protocol LogRecordMirror: Sendable {
    /// Must return at once: mirroring is never on the ingest hot path.
    func mirror(_ records: [DecodedRecord], env: TelemetryEnvironment)
}

/// Used when mirroring is off.
public struct DisabledLogMirror: LogRecordMirror {
    public init() {}
    public func mirror(_ records: [DecodedRecord], env: TelemetryEnvironment) {}
}
