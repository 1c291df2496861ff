import TelemetryModel

/// What the mirror writes as the `MESSAGE` of a verbose-level record. Verbose text may hold
/// personal data, and the journal is outside the daemon's redaction and retention (anyone in
/// group `systemd-journal` or `adm` reads it), so by default it is withheld — its length and
/// keyed digest, as a query without the `pii` scope shows it — and `raw` is an opt-in.
public enum JournalVerboseMessages: String, Sendable, Hashable, CaseIterable {
    case redact
    case raw
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
    /// Whether verbose records' text is mirrored as sent or withheld.
    public var verboseMessages: JournalVerboseMessages
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

    /// The defaults: enabled, every level, verbose text withheld, 100,000 queued entries,
    /// 5 s shutdown flush, one retry a second while journald is away.
    public init(
        enabled: Bool = true, minimumLevel: LogLevel = .verbose, verboseMessages: JournalVerboseMessages = .redact,
        queueCapacity: Int = 100_000, shutdownFlushTimeout: Duration = .seconds(5),
        unavailableRetryInterval: Duration = .seconds(1)
    ) {
        self.enabled = enabled
        self.minimumLevel = minimumLevel
        self.verboseMessages = verboseMessages
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
