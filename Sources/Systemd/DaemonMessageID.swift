/// Stable journald `MESSAGE_ID`s for the daemon's notable events.
///
/// A `MESSAGE_ID` lets an operator find every occurrence of an event regardless of its
/// wording (`journalctl MESSAGE_ID=...`), and lets `journalctl -x` show the explanation
/// from `systemd/mamtelemetryd.catalog`. The ids are random 128-bit values generated once
/// and must never change: alerts, saved searches and the catalog refer to them. Every
/// notable event logs with `.messageID(...)` from this enum, never a literal id; a test scans
/// the sources for those call sites and checks the catalog explains exactly what is sent.
public enum DaemonMessageID: String, Sendable, CaseIterable {
    /// The daemon is ready: store open, listener bound, READY=1 sent.
    case started = "a6099522270d4485853645158218332e"
    /// The daemon finished a graceful shutdown.
    case stopped = "306032cd1e304418aad03bb2f01d37c6"
    /// Ingest was refused (backpressure, store full or unavailable) with 429/503/507.
    case ingestRefused = "ae757b8f0c53474885405f3173698026"
    /// The store passed its disk high-water mark; ingest is refused until space returns.
    case storageHighWater = "5f615aebe5e24591a3ca4ede4cdc14b9"
    /// Free space is back above the high-water mark; ingest is accepted again.
    case storageRecovered = "69a4bd62e2cd4d9cb71c71dc37dd9dda"
    /// No systemd journal is reachable; records are not mirrored, the log goes to stderr.
    case journalUnavailable = "7f63436a9bb741f2966ac4e41165c087"
    /// Configuration and tokens were reloaded (SIGHUP / `systemctl reload`).
    case configReloaded = "1109b52a91774c40a0965fa6e4068268"

    /// The id as journald writes it: 32 lower-case hex digits.
    public var id: String { rawValue }

    /// The id in the 8-4-4-4-12 UUID form that some tools print.
    public var uuidString: String {
        let hex = Array(rawValue)
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32]
        return groups.map { String(hex[$0]) }.joined(separator: "-")
    }
}

/// `MESSAGE_ID`s of the journal entries that report failed enrollment calls (one entry per
/// app, status code and minute, see ``EnrollmentFailureDigest``), one id per failure code so
/// `journalctl -x` shows that code's explanation from the catalog. An id is a fixed prefix
/// followed by the code's decimal digits as its last four hex digits (`…0200` for
/// AccountNotLicensed), readable in a raw journal; `…0000` stands for a failed call with an
/// undocumented code or none. Like ``DaemonMessageID`` the ids never change.
public enum EnrollmentFailureMessageID {
    static let prefix = "98b4e757220d470bbf6251f24870"

    /// The documented failure codes (2xx) that have an id of their own.
    public static let documentedCodes = 200...227

    /// The id for a failed call with `code`: the code's own, or the one for undocumented codes.
    public static func id(for code: Int?) -> String {
        guard let code, documentedCodes.contains(code) else { return prefix + "0000" }
        let digits = String(code)
        return prefix + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Every id the daemon may send: one per documented failure code, then the undocumented one.
    public static var all: [String] { documentedCodes.map { id(for: $0) } + [id(for: nil)] }
}
