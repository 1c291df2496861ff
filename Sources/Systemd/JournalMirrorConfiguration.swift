public import TelemetryModel

/// Whether the mirror may write personal data into the journal. The journal is outside the
/// daemon's redaction and retention, and anyone in group `systemd-journal` or `adm` reads it,
/// so by default (`redact`) every field of a mirrored record carries what a caller without
/// the `pii` scope may see: identities only as `MAM_IDENTITY_HASH`, e-mail addresses as
/// pseudonyms, verbose text withheld. `include` is the operator's explicit opt-in to
/// messages and fields as sent. Credentials are masked either way.
public enum JournalPersonalData: String, Sendable, Hashable, CaseIterable {
    case redact
    case include
}

/// What the operator decides about mirroring diagnostic log records into the journal.
///
/// Mirroring is on by default because `journalctl` is the support engineer's first viewer;
/// a site with a busy fleet can raise ``minimumLevel`` to keep verbose records (which may
/// carry PII) out of a journal it cannot redact.
public struct JournalMirrorConfiguration: Sendable, Hashable {
    /// Whether accepted log records are mirrored at all.
    public var enabled: Bool
    /// Records below this level are not mirrored.
    public var minimumLevel: LogLevel
    /// Whether personal data is redacted in mirrored entries (the default) or included.
    public var personalData: JournalPersonalData
    /// Entries waiting for journald, at most; past it, new entries are dropped (and
    /// counted) so a stalled journald costs bounded memory instead of blocking ingest.
    public var queueCapacity: Int
    /// How long a graceful shutdown waits for queued entries to reach journald before the
    /// rest are dropped; kept well under the unit's `TimeoutStopSec=`.
    public var shutdownFlushTimeout: Duration
    /// While journald is unreachable, how often one entry is tried again; entries in
    /// between are counted as failed without a system call, so a missing journal costs
    /// nothing and is never retried in a tight loop.
    public var unavailableRetryInterval: Duration

    /// The defaults: enabled, every level, personal data redacted, 100,000 queued entries,
    /// 5 s shutdown flush, one retry a second while journald is away.
    public init(
        enabled: Bool = true, minimumLevel: LogLevel = .verbose, personalData: JournalPersonalData = .redact,
        queueCapacity: Int = 100_000, shutdownFlushTimeout: Duration = .seconds(5),
        unavailableRetryInterval: Duration = .seconds(1)
    ) {
        self.enabled = enabled
        self.minimumLevel = minimumLevel
        self.personalData = personalData
        self.queueCapacity = max(1, queueCapacity)
        self.shutdownFlushTimeout = shutdownFlushTimeout
        self.unavailableRetryInterval = unavailableRetryInterval
    }

    /// Whether a record at `level` should be mirrored, so ingest can skip building the
    /// entry at all for records that would not be.
    public func shouldMirror(level: LogLevel) -> Bool {
        enabled && level >= minimumLevel
    }
}
