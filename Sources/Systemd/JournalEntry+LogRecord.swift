public import TelemetryModel

extension JournalEntry {
    /// The `SYSLOG_IDENTIFIER` of everything the daemon writes, so `journalctl -t
    /// mamtelemetryd` shows mirrored records next to the daemon's own log.
    public static let daemonIdentifier = "mamtelemetryd"

    /// The journal entry for an accepted diagnostic log record, so support
    /// engineers can use `journalctl MAM_DEVICE_ID=... MAM_ENV=prod` as a viewer.
    ///
    /// Fields: `MESSAGE`, `PRIORITY` (the level's syslog priority: error 3, warning 4,
    /// info 6, verbose 7), `SYSLOG_IDENTIFIER`, then the `MAM_` fields `MAM_APP_ID`,
    /// `MAM_DEVICE_ID`, `MAM_SESSION_ID`, `MAM_ENV`, `MAM_LEVEL`, `MAM_COMPONENT`,
    /// `MAM_EVENT_TIME` (the device's time, RFC 3339), `MAM_INCIDENT_ID` and
    /// `MAM_IDENTITY_HASH`; text fields that are empty are left out rather than written
    /// empty, so `journalctl -F` does not list a blank value.
    ///
    /// The raw identity in `keys.identity` is never written: the journal is readable by
    /// every member of `systemd-journal`/`adm` and is outside our retention and redaction,
    /// so only the caller's keyed hash (`identityHash`) goes in.
    ///
    /// - Parameters:
    ///   - keys: the record's index keys; a record without a level is mirrored as `info`,
    ///     the level unparseable text lines are kept at.
    ///   - message: the log message; may span several lines.
    ///   - env: the environment the record was stored in (`MAM_ENV=ppe` for test data).
    ///   - identityHash: the stable keyed hash of the identity, when the record had one.
    ///   - identifier: the `SYSLOG_IDENTIFIER`; the daemon's own by default.
    public static func logRecord(
        keys: RecordKeys, message: String, env: TelemetryEnvironment, identityHash: String?,
        identifier: String = JournalEntry.daemonIdentifier
    ) -> JournalEntry {
        let level = keys.level ?? .info
        var entry = JournalEntry()
        entry.append("MESSAGE", message)
        entry.append("PRIORITY", String(level.syslogPriority))
        entry.append("SYSLOG_IDENTIFIER", identifier)
        entry.appendIfPresent("MAM_APP_ID", keys.appId)
        entry.appendIfPresent("MAM_DEVICE_ID", keys.deviceId)
        entry.appendIfPresent("MAM_SESSION_ID", keys.sessionId)
        entry.append("MAM_ENV", env.rawValue)
        entry.append("MAM_LEVEL", level.name)
        entry.appendIfPresent("MAM_COMPONENT", keys.detail)
        entry.append("MAM_EVENT_TIME", Timestamp.format(milliseconds: keys.time))
        entry.appendIfPresent("MAM_INCIDENT_ID", keys.incident)
        entry.appendIfPresent("MAM_IDENTITY_HASH", identityHash ?? "")
        return entry
    }

    /// The journal entry for a decoded log record: ``logRecord(keys:message:env:identityHash:identifier:)``
    /// with the message the decoder kept, so the mirror never parses the JSON again.
    public static func logRecord(
        _ record: DecodedRecord, env: TelemetryEnvironment, identityHash: String?,
        identifier: String = JournalEntry.daemonIdentifier
    ) -> JournalEntry {
        logRecord(
            keys: record.keys, message: record.message ?? "", env: env, identityHash: identityHash,
            identifier: identifier)
    }

    private mutating func appendIfPresent(_ name: String, _ value: String) {
        if !value.isEmpty { append(name, value) }
    }
}
