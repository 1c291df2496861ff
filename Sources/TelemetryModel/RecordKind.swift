/// The two streams the daemon stores: SDK telemetry events and diagnostic log records.
/// They share the storage machinery but differ in retention, journald mirroring and
/// the filters that apply to them.
public enum RecordKind: String, Sendable, Hashable, CaseIterable, Codable {
    case event
    case log
}
