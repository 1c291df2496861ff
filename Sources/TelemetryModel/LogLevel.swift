/// The SDK logger's four levels, ordered so `level>=warning` style filters are a comparison.
/// Verbose records may carry PII, which is why they are treated separately in
/// retention and redaction.
public enum LogLevel: Int, Sendable, Hashable, CaseIterable, Comparable, Codable {
    case verbose = 0
    case info = 1
    case warning = 2
    case error = 3

    public var name: String {
        switch self {
        case .verbose: "verbose"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    /// syslog priority used for the journald mirror.
    public var syslogPriority: Int {
        switch self {
        case .verbose: 7
        case .info: 6
        case .warning: 4
        case .error: 3
        }
    }

    /// Accepts the SDK's names and the common aliases that console exports use.
    public init?(name: String) {
        switch name.lowercased() {
        case "verbose", "debug", "trace", "v", "d": self = .verbose
        case "info", "information", "notice", "i": self = .info
        case "warning", "warn", "w": self = .warning
        case "error", "err", "fatal", "critical", "e", "f": self = .error
        default: return nil
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
