/// The order in which retention gives up data when it must delete for space (the size cap,
/// the keep-free floor): verbose-only log batches first (possibly PII, and the least useful
/// later), then the other log batches, then telemetry events. Within a class the oldest
/// batch goes first, so what survives is always the newest data of its class.
public enum RetentionClass: Int, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case verboseLogs
    case logs
    case events

    public var description: String {
        switch self {
        case .verboseLogs: "verbose logs"
        case .logs: "logs"
        case .events: "events"
        }
    }
}
