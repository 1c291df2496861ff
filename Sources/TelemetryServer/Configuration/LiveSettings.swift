public import StoreCore
import Synchronization

/// The settings a running daemon takes on `systemctl reload` (SIGHUP) without a restart.
/// Components read them at the moment they need them (the retention pass, the disk check,
/// an ingest answer, a `/metrics` request), so a reload changes behaviour at once.
public struct ReloadableSettings: Sendable, Hashable {
    public var logLevel: String
    public var retention: RetentionPolicy
    public var disk: DiskGuard.Configuration
    public var killSwitchSeconds: Int
    public var metricsRequireToken: Bool
    public var perTokenRecordsPerSecond: Int

    public init(_ configuration: ServerConfiguration) {
        logLevel = configuration.logLevel
        retention = configuration.retention
        disk = configuration.disk
        killSwitchSeconds = configuration.killSwitchSeconds
        metricsRequireToken = configuration.auth.metricsRequireToken
        perTokenRecordsPerSecond = configuration.perTokenRecordsPerSecond
    }
}

/// Holds the ``ReloadableSettings`` in force; a reload swaps them whole, so a reader never
/// sees half of an old configuration and half of a new one. One instance per daemon,
/// handed to the components that read it.
public final class LiveSettings: Sendable {
    private let settings: Mutex<ReloadableSettings>

    public init(_ configuration: ServerConfiguration) {
        settings = Mutex(ReloadableSettings(configuration))
    }

    /// The settings in force now.
    public var current: ReloadableSettings { settings.withLock { $0 } }

    /// Puts the reloadable part of `configuration` in force.
    public func apply(_ configuration: ServerConfiguration) {
        let fresh = ReloadableSettings(configuration)
        settings.withLock { $0 = fresh }
    }
}
