/// The order in which retention gives up data when it must delete for space (the size cap,
/// the keep-free floor): verbose-only log batches first (possibly PII, and the least useful
/// later), then the other log batches, then telemetry events. Within a class the oldest
/// batch goes first, so what survives is always the newest data of its class.
public enum RetentionClass: Int, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case verboseLogs
    case logs
    case events

    /// The `batch` rows of this class. `kind` 0 is events, 1 logs; the low four bits of
    /// `levelMask` are the levels a batch holds (bit 0 verbose), so `1` is verbose-only.
    var condition: String {
        switch self {
        case .verboseLogs: "kind = 1 AND (levelMask & 15) = 1"
        case .logs: "kind = 1 AND (levelMask & 15) <> 1"
        case .events: "kind = 0"
        }
    }

    public var description: String {
        switch self {
        case .verboseLogs: "verbose logs"
        case .logs: "logs"
        case .events: "events"
        }
    }
}
