import Logging
import Synchronization

/// A swift-log backend that keeps every entry in memory, so a test can see what the code
/// logged (the access log, refusals) instead of guessing from side effects.
struct RecordingLogHandler: LogHandler {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    final class Box: Sendable {
        let entries = Mutex<[Entry]>([])
        func take() -> [Entry] {
            entries.withLock { e in
                defer { e.removeAll() }
                return e
            }
        }
    }

    let box: Box
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all: [String: String] = [:]
        for (k, v) in metadata { all[k] = "\(v)" }
        for (k, v) in event.metadata ?? [:] { all[k] = "\(v)" }
        box.entries.withLock { $0.append(Entry(level: event.level, message: "\(event.message)", metadata: all)) }
    }

    /// A logger whose entries land in `box`.
    static func logger(_ box: Box, label: String = "test") -> Logger {
        Logger(label: label) { _ in RecordingLogHandler(box: box) }
    }
}
