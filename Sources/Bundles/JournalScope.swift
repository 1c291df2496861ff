import Privacy
import TelemetryModel

/// Which journal entries belong in a bundle's `journal.txt`: the mirrored records of what
/// the bundle is for, and the daemon's own operational lines — never another device's,
/// user's or environment's records. The bundle's scope becomes `MAM_*` field values
/// (incident, device, identity pseudonym, app, session, environment).
///
/// A mirrored record must carry every one of those fields with the bundle's value. The
/// daemon's own lines (written by its log handler, which always sets `MAM_LOGGER`) carry
/// few `MAM_*` fields; they are kept unless a field they do carry names something else (a
/// retention line about PPE stays out of a prod bundle).
struct JournalScope: Sendable, Equatable {
    /// `MAM_*` field name -> the value an entry must have.
    var fields: [String: String]

    /// The field only the daemon's own log lines carry (its logger's label).
    static let ownLineField = "MAM_LOGGER"
    /// The logger label every one of the daemon's own lines carries.
    static let daemonLogger = "mamtelemetryd"

    init(fields: [String: String]) { self.fields = fields }

    init(_ bundle: PreparedBundle, pseudonymizer: Pseudonymizer) {
        let r = bundle.request
        var f = ["MAM_ENV": bundle.env.rawValue]
        // An incident's story is its device's: the upload's records carry that device too.
        if let device = bundle.storyDevice {
            f["MAM_DEVICE_ID"] = device
        } else if let v = r.incident, !v.isEmpty {
            f["MAM_INCIDENT_ID"] = v
        }
        if let v = r.device, !v.isEmpty { f["MAM_DEVICE_ID"] = v }
        if let v = r.identityScopePseudonym(pseudonymizer), !v.isEmpty { f["MAM_IDENTITY_HASH"] = v }
        if let v = r.app, !v.isEmpty { f["MAM_APP_ID"] = v }
        if let v = r.session, !v.isEmpty { f["MAM_SESSION_ID"] = v }
        fields = f
    }

    /// Whether an entry (its fields as journalctl's JSON output gives them) belongs.
    func admits(_ entry: [String: String]) -> Bool {
        let own = entry[Self.ownLineField] != nil
        for (name, wanted) in fields {
            if let value = entry[name] {
                if value != wanted { return false }
            } else if !own {
                return false
            }
        }
        return true
    }

    /// journalctl matches that narrow the read to (probably) admitted entries, so a bundle
    /// does not parse a whole fleet's day of mirrored lines: this scope's fields, or a line
    /// of the daemon's own logger. `admits` stays the rule; this only saves work.
    var journalctlMatches: [String] {
        fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + ["+", "\(Self.ownLineField)=\(Self.daemonLogger)"]
    }
}
