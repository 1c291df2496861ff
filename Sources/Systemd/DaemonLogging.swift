public import Logging

/// Chooses and installs the daemon's swift-log backend once at start-up.
///
/// Under systemd (journald's socket answers) the log goes to ``JournaldLogHandler`` with
/// structured fields; anywhere else (a container, a shell, a test harness without journald)
/// it goes to stderr through swift-log's `StreamLogHandler`, and one warning with the
/// ``DaemonMessageID/journalUnavailable`` id says why — the daemon keeps working either way.
public enum DaemonLogging {
    /// The backend in use, reported so `main` and `/readyz` can show it.
    public enum Backend: String, Sendable, Hashable {
        /// The systemd journal, through the native protocol.
        case journal
        /// Plain lines on standard error.
        case standardError
    }

    /// Installs the daemon's log backend with `LoggingSystem.bootstrap`; call once, first
    /// thing in `main`.
    ///
    /// - Parameters:
    ///   - identifier: `SYSLOG_IDENTIFIER` for journal entries.
    ///   - level: the least severe level logged.
    ///   - metadataProvider: contextual metadata (e.g. a request id) added to every entry.
    ///   - journalReachable: whether to use the journal; by default whether journald's
    ///     socket answers now.
    /// - Returns: the backend chosen.
    @discardableResult
    public static func bootstrap(
        identifier: String = JournalEntry.daemonIdentifier, level: Logger.Level,
        metadataProvider: Logger.MetadataProvider? = nil,
        journalReachable: Bool = JournalSocket.isReachable()
    ) -> Backend {
        bootstrap(
            identifier: identifier, levelControl: LogLevelControl(level), metadataProvider: metadataProvider,
            journalReachable: journalReachable)
    }

    /// As ``bootstrap(identifier:level:metadataProvider:journalReachable:)``, with a level
    /// that can change while the daemon runs (see ``LogLevelControl``).
    @discardableResult
    public static func bootstrap(
        identifier: String = JournalEntry.daemonIdentifier, levelControl: LogLevelControl,
        metadataProvider: Logger.MetadataProvider? = nil,
        journalReachable: Bool = JournalSocket.isReachable()
    ) -> Backend {
        let backend: Backend = journalReachable ? .journal : .standardError
        let makeHandler = makeHandlerFactory(backend: backend, identifier: identifier, level: .trace)
        LoggingSystem.bootstrap(
            { label, provider in ControlledLevelLogHandler(wrapping: makeHandler(label, provider), control: levelControl) },
            metadataProvider: metadataProvider)
        if backend == .standardError {
            Logger(label: identifier).warning(
                "systemd journal unavailable; the daemon logs to stderr, and diagnostic log records are mirrored only once the journal appears",
                metadata: .messageID(.journalUnavailable, ["socket": "\(JournalSocket.path)"]))
        }
        return backend
    }

    /// The handler factory `bootstrap` installs, exposed so tests (which cannot bootstrap
    /// the process-wide logging system twice) can check which handler each backend makes.
    public static func makeHandlerFactory(
        backend: Backend, identifier: String = JournalEntry.daemonIdentifier, level: Logger.Level
    ) -> @Sendable (String, Logger.MetadataProvider?) -> any LogHandler {
        { label, metadataProvider in
            switch backend {
            case .journal:
                return JournaldLogHandler(
                    label: label, identifier: identifier, level: level,
                    metadataProvider: metadataProvider)
            case .standardError:
                var handler = StreamLogHandler.standardError(label: label, metadataProvider: metadataProvider)
                handler.logLevel = level
                return handler
            }
        }
    }
}
