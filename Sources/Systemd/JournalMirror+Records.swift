public import TelemetryModel

/// What the journal is shown of one mirrored record: its index keys and message as the
/// journal's readers may see them (the caller applies the daemon's visibility rule; this
/// target knows nothing of it), and the keyed hash of its identity (the raw identity is
/// never written, whatever `keys.identity` holds).
public struct MirroredRecord: Sendable {
    public var keys: RecordKeys
    public var message: String
    public var identityHash: String?

    public init(keys: RecordKeys, message: String, identityHash: String?) {
        self.keys = keys
        self.message = message
        self.identityHash = identityHash
    }
}

extension JournalMirror {
    /// Mirrors accepted diagnostic log records: keeps those at or above the minimum level,
    /// builds their entries from what `shown` makes of each and queues them. Returns at once,
    /// like ``submit(_:)-([JournalEntry])``; the only work on the caller's thread is building
    /// the entries.
    ///
    /// - Parameters:
    ///   - records: records that are already durable (only those are mirrored: the journal never shows a record the store might lose).
    ///   - env: the environment they were stored in.
    ///   - shown: the record as the journal may show it, under the configuration's
    ///     ``JournalMirrorConfiguration/personalData``.
    public func submit(
        _ records: [DecodedRecord], env: TelemetryEnvironment, shown: (DecodedRecord, JournalPersonalData) -> MirroredRecord
    ) {
        let configuration = self.configuration
        guard configuration.enabled else { return }
        let entries = records.compactMap { record -> JournalEntry? in
            guard configuration.shouldMirror(level: record.keys.level ?? .info) else { return nil }
            let view = shown(record, configuration.personalData)
            var keys = view.keys
            keys.level = record.keys.level
            return JournalEntry.logRecord(keys: keys, message: view.message, env: env, identityHash: view.identityHash)
        }
        submit(entries)
    }
}
