public import Logging

extension Logger.Level {
    /// The syslog priority journald files a swift-log level under, so `journalctl -p` and
    /// the colouring of `journalctl` treat the daemon's log like any other service's.
    /// swift-log has seven levels and syslog eight; trace and debug share "debug" (7).
    public var syslogPriority: Int {
        switch self {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
