public import Logging
public import ServiceLifecycle

/// Pings systemd's watchdog only while the daemon is healthy, and keeps the unit's
/// `STATUS=` line current.
///
/// A timer that pings unconditionally would keep a wedged daemon alive forever; this
/// service asks a liveness probe (the server passes "the committer made progress, or is
/// idle and healthy") every half watchdog interval and sends `WATCHDOG=1` only when it says
/// yes, so systemd restarts a daemon whose commit path is stuck. Put it *first* in the
/// `ServiceGroup`: services stop in reverse order, so the pings continue while the others
/// drain. It returns on graceful shutdown or cancellation.
public struct WatchdogService: Service {
    private let notifier: SystemdNotifier
    private let pingInterval: Duration?
    private let statusInterval: Duration
    private let logger: Logger
    private let livenessProbe: @Sendable () async -> Bool
    private let statusText: (@Sendable () async -> String)?

    /// - Parameters:
    ///   - notifier: where pings and status lines go.
    ///   - interval: ping period; by default the notifier's ``SystemdNotifier/watchdogInterval``
    ///     (half `WATCHDOG_USEC`). With neither, no pings are sent.
    ///   - statusInterval: how often the status line is refreshed when the watchdog is off.
    ///   - logger: told when the probe first fails and when it recovers.
    ///   - livenessProbe: `true` when the daemon is making progress.
    ///   - statusText: the `STATUS=` text, refreshed on every tick.
    public init(
        notifier: SystemdNotifier = SystemdNotifier(), interval: Duration? = nil,
        statusInterval: Duration = .seconds(10), logger: Logger,
        livenessProbe: @escaping @Sendable () async -> Bool,
        statusText: (@Sendable () async -> String)? = nil
    ) {
        self.notifier = notifier
        self.pingInterval = interval ?? notifier.watchdogInterval
        self.statusInterval = statusInterval
        self.logger = logger
        self.livenessProbe = livenessProbe
        self.statusText = statusText
    }

    public func run() async throws {
        guard pingInterval != nil || (statusText != nil && notifier.isSupervised) else {
            // Nothing to do without a watchdog or a listener, but a service that returns
            // early would end the whole group: wait for shutdown instead.
            try? await gracefulShutdown()
            return
        }
        let tick = pingInterval ?? statusInterval
        try? await cancelWhenGracefulShutdown { [self] in
            var healthy = true
            while !Task.isCancelled {
                if pingInterval != nil {
                    let alive = await livenessProbe()
                    if alive {
                        notifier.watchdog()
                    }
                    if alive != healthy {
                        healthy = alive
                        report(healthy: alive)
                    }
                }
                if let statusText {
                    notifier.status(await statusText())
                }
                try await Task.sleep(for: tick)
            }
        }
    }

    private func report(healthy: Bool) {
        if healthy {
            logger.notice("liveness probe healthy again; watchdog pings resumed")
        } else {
            logger.error(
                "liveness probe failed; withholding watchdog pings (systemd restarts the daemon if this lasts WatchdogSec)")
        }
    }
}
