public import Logging
import Synchronization

/// The daemon's log level, changeable while it runs: `systemctl reload` with a new
/// `logLevel` sets it, and every logger made through ``DaemonLogging`` sees it at its next
/// call. swift-log copies a handler into each `Logger`, so a level stored in the handler
/// could never change afterwards; this one is shared by reference instead.
public final class LogLevelControl: Sendable {
    private let stored: Mutex<Logger.Level>

    public init(_ level: Logger.Level) {
        stored = Mutex(level)
    }

    public var level: Logger.Level {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}

/// A handler whose level is the daemon's ``LogLevelControl`` unless this logger copy set
/// its own (swift-log's contract: setting `logLevel` changes only that copy).
struct ControlledLevelLogHandler: LogHandler {
    var wrapped: any LogHandler
    let control: LogLevelControl
    private var ownLevel: Logger.Level?

    init(wrapping handler: any LogHandler, control: LogLevelControl) {
        var handler = handler
        // The wrapped handler must not filter on a level of its own: the control decides.
        handler.logLevel = .trace
        wrapped = handler
        self.control = control
    }

    var logLevel: Logger.Level {
        get { ownLevel ?? control.level }
        set { ownLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        wrapped.log(event: event)
    }
}
