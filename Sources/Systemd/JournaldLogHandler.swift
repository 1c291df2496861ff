import Glibc
public import Logging

/// A swift-log backend that writes the daemon's own log to the systemd journal through the
/// native protocol, so every line carries structured fields instead of being a
/// flat stderr line.
///
/// Each log call becomes one entry with `MESSAGE`, `PRIORITY` (see
/// `Logger.Level.syslogPriority`), `SYSLOG_IDENTIFIER`, `CODE_FILE`, `CODE_LINE`,
/// `CODE_FUNC`, the logger's label as `MAM_LOGGER`, the error (when one is attached) as
/// `MAM_ERROR`, and every metadata item as a field named by
/// ``JournalFieldName/forMetadataKey(_:)`` (`request.id` → `MAM_REQUEST_ID`; `MESSAGE_ID`
/// stays `MESSAGE_ID`, so `journalctl -x` finds the catalog entry).
///
/// The send is synchronous: the daemon's own log is low-volume (the high-volume path, the
/// record mirror, goes through ``JournalMirror``). If journald refuses the entry, the line
/// is written to stderr instead, so a message is never lost to a journal restart.
public struct JournaldLogHandler: LogHandler {
    /// The logger label, sent as `MAM_LOGGER`.
    public let label: String
    /// The `SYSLOG_IDENTIFIER` of every entry.
    public let identifier: String
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let sink: any JournalSink

    /// - Parameters:
    ///   - label: the logger's label.
    ///   - identifier: `SYSLOG_IDENTIFIER`, so `journalctl -t mamtelemetryd` shows the daemon.
    ///   - level: the least severe level logged.
    ///   - sink: the native journal unless a test records entries.
    ///   - metadataProvider: contextual metadata added to every entry.
    public init(
        label: String, identifier: String = JournalEntry.daemonIdentifier, level: Logger.Level = .info,
        sink: any JournalSink = NativeJournalSink(),
        metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider
    ) {
        self.label = label
        self.identifier = identifier
        self.logLevel = level
        self.sink = sink
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let entry = entry(for: event)
        let result = sink.send(entry)
        if result != 0 { writeToStandardError(event, reason: result) }
    }

    /// The journal entry for one log event; separate from sending so tests can check the
    /// field mapping.
    public func entry(for event: LogEvent) -> JournalEntry {
        var entry = JournalEntry()
        entry.append("MESSAGE", event.message.description)
        entry.append("PRIORITY", String(event.level.syslogPriority))
        entry.append("SYSLOG_IDENTIFIER", identifier)
        entry.append("CODE_FILE", event.file)
        entry.append("CODE_LINE", String(event.line))
        entry.append("CODE_FUNC", event.function)
        entry.append("MAM_LOGGER", label)
        if let error = event.error {
            entry.append("MAM_ERROR", String(describing: error))
        }
        for (key, value) in mergedMetadata(event.metadata).sorted(by: { $0.key < $1.key }) {
            entry.append(JournalFieldName.forMetadataKey(key), value.description)
        }
        return entry
    }

    /// Handler metadata, then the provider's, then the call's: later wins, as in swift-log's
    /// own handlers.
    private func mergedMetadata(_ explicit: Logger.Metadata?) -> Logger.Metadata {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let explicit {
            merged.merge(explicit) { _, new in new }
        }
        return merged
    }

    /// Last resort when journald refused the entry: one plain line on stderr.
    private func writeToStandardError(_ event: LogEvent, reason: Int32) {
        var line = "\(identifier)[\(getpid())]: \(event.level) \(label): \(event.message)"
        let merged = mergedMetadata(event.metadata)
        if !merged.isEmpty {
            line +=
                " "
                + merged.sorted(by: { $0.key < $1.key }).map { "\($0.key)=\($0.value)" }
                .joined(separator: " ")
        }
        line += " (journal: \(JournalSocket.describe(reason)))\n"
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
