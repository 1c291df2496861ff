public import Logging
public import ServiceLifecycle

/// Tells systemd `STOPPING=1` the moment shutdown begins. It is the last service of the
/// daemon's group, so it is the first one asked to stop, before the HTTP server drains.
public struct StopNotifierService: Service {
    let notifier: SystemdNotifier
    let logger: Logger

    public init(notifier: SystemdNotifier, logger: Logger) {
        self.notifier = notifier
        self.logger = logger
    }

    public func run() async throws {
        try? await gracefulShutdown()
        _ = notifier.stopping()
        logger.notice("stopping: draining in-flight requests and commits")
    }
}
