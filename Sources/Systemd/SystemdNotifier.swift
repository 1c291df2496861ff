import CSystemd
import Glibc

/// Tells systemd about the daemon's state through `sd_notify` (the unit is `Type=notify`):
/// ready, reloading, stopping, a status line, and watchdog pings.
///
/// Every call is a no-op returning `false` when `NOTIFY_SOCKET` is unset (run from a shell
/// or a test), so the daemon calls these unconditionally.
public struct SystemdNotifier: Sendable {
    public init() {}

    /// Whether a service manager is listening (`NOTIFY_SOCKET` is set).
    public var isSupervised: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// `READY=1`: the store is open and the listener bound, so `systemctl start` returns
    /// and dependants may start. An optional status line is sent in the same datagram.
    @discardableResult
    public func ready(status: String? = nil) -> Bool {
        notify(["READY=1"] + (status.map { ["STATUS=" + Self.singleLine($0)] } ?? []))
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=`: a configuration reload started (SIGHUP).
    /// systemd 253+ (`Type=notify-reload`) requires the timestamp to match the reload to
    /// the request; older versions ignore it. Send ``ready(status:)`` when it is done.
    @discardableResult
    public func reloading() -> Bool {
        notify(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"])
    }

    /// `STOPPING=1`: shutdown began (SIGTERM); in-flight batches are being drained.
    @discardableResult
    public func stopping() -> Bool {
        notify(["STOPPING=1"])
    }

    /// `STATUS=...`: the one-line state `systemctl status` shows. Newlines are replaced by
    /// spaces, since a newline would start a new (possibly meaningful) assignment.
    @discardableResult
    public func status(_ text: String) -> Bool {
        notify(["STATUS=" + Self.singleLine(text)])
    }

    /// `WATCHDOG=1`: the daemon is alive; must come within `WatchdogSec=` or systemd kills
    /// and restarts it. Send only after checking the daemon really makes progress — see
    /// ``WatchdogService``.
    @discardableResult
    public func watchdog() -> Bool {
        notify(["WATCHDOG=1"])
    }

    /// `EXTEND_TIMEOUT_USEC=`: asks for more time for the current start, reload or stop
    /// (e.g. a long WAL replay or drain), counted from now.
    @discardableResult
    public func extendTimeout(by duration: Duration) -> Bool {
        notify(["EXTEND_TIMEOUT_USEC=\(Self.microseconds(duration))"])
    }

    /// How often to ping: half the `WATCHDOG_USEC` systemd set (the documented advice),
    /// or `nil` when the watchdog is off or meant for another process (`WATCHDOG_PID`).
    public var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec / 2))
    }

    /// Sends newline-separated assignments in one datagram.
    /// - Returns: `true` when sent; `false` when not supervised or the send failed.
    @discardableResult
    public func notify(_ assignments: [String]) -> Bool {
        sd_notify(0, assignments.joined(separator: "\n")) > 0
    }

    static func singleLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
