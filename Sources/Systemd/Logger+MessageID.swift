public import Logging

extension Logger.Metadata {
    /// The metadata key journald reads the message id from; the journald handler keeps it
    /// as `MESSAGE_ID` (every other key gets a `MAM_` prefix).
    public static let messageIDKey = "MESSAGE_ID"

    /// Metadata carrying a daemon `MESSAGE_ID`, so a notable event reads
    /// `logger.notice("...", metadata: .messageID(.started))` at the call site.
    ///
    /// - Parameters:
    ///   - id: the event's stable id (explained in the journald catalog).
    ///   - other: further metadata to send with it.
    public static func messageID(_ id: DaemonMessageID, _ other: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = other
        metadata[messageIDKey] = .string(id.rawValue)
        return metadata
    }
}
