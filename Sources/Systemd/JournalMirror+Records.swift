import TelemetryModel

extension JournalMirror {
    /// Mirrors accepted diagnostic log records: keeps those at or above the minimum level,
    /// builds their entries (``JournalEntry/logRecord(_:env:identityHash:identifier:)``) and
    /// queues them. Returns at once, like ``submit(_:)-([JournalEntry])``; the only work on
    /// the caller's thread is building the entries.
    ///
    /// - Parameters:
    ///   - records: records that are already durable (only those are mirrored: the journal never shows a record the store might lose).
    ///   - env: the environment they were stored in.
    ///   - identityHash: the keyed hash of a (lower-cased) identity, called only for records
    ///     that have one; the raw identity never reaches the journal.
    ///   - withhold: what a verbose record's message becomes when
    ///     ``JournalMirrorConfiguration/verboseMessages`` is `redact` (the default).
    public func submit(
        _ records: [DecodedRecord], env: TelemetryEnvironment, identityHash: (String) -> String?,
        withhold: (String) -> String
    ) {
        let configuration = self.configuration
        guard configuration.enabled else { return }
        let entries = records.compactMap { record -> JournalEntry? in
            let level = record.keys.level ?? .info
            guard configuration.shouldMirror(level: level) else { return nil }
            let hash = record.keys.identity.isEmpty ? nil : identityHash(record.keys.identity)
            var message = record.message ?? ""
            if level == .verbose, configuration.verboseMessages == .redact { message = withhold(message) }
            return JournalEntry.logRecord(keys: record.keys, message: message, env: env, identityHash: hash)
        }
        submit(entries)
    }
}
