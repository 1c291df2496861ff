import Bundles
import Privacy
import Systemd
import TelemetryModel

/// Mirrors stored diagnostic log records into the systemd journal through the `Systemd`
/// target's queue (never blocking ingest). Every field is what `RecordVisibility` shows a
/// caller without the `pii` scope — the identity only as `MAM_IDENTITY_HASH` (the same
/// `user-…` pseudonym queries and bundles show; `mamtelemetryctl pseudonym <upn>` prints it
/// for `journalctl MAM_IDENTITY_HASH=…`), e-mail addresses pseudonymized, verbose text
/// withheld — unless `journal.personalData: include`; credentials are masked either way.
struct JournalLogMirror: LogRecordMirror {
    let mirror: JournalMirror
    let pseudonymizer: Pseudonymizer

    func mirror(_ records: [DecodedRecord], env: TelemetryEnvironment) {
        let pseudonymizer = self.pseudonymizer
        // One visibility per batch and mode: its pseudonym cache serves the batch.
        let redacted = RecordVisibility(piiAllowed: false, pseudonymizer: pseudonymizer)
        let included = RecordVisibility(piiAllowed: true, pseudonymizer: pseudonymizer)
        mirror.submit(records, env: env) { record, personalData in
            Self.shown(record, visibility: personalData == .include ? included : redacted)
        }
    }

    /// What the journal shows of `record` under `visibility`.
    static func shown(_ record: DecodedRecord, visibility: RecordVisibility) -> MirroredRecord {
        var redactor = visibility.redactor()
        let verbose = record.keys.level == .verbose
        let message = redactor.journalMessage(record.message ?? "", verbose: verbose)
        let identity = record.keys.identity
        return MirroredRecord(
            keys: redactor.shown(record.keys), message: message,
            identityHash: identity.isEmpty ? nil : visibility.pseudonymizer.identityPseudonym(identity))
    }
}

extension JournalMirrorConfiguration {
    init(_ c: ServerConfiguration) {
        self.init()
        enabled = c.journalMirror
        minimumLevel = c.journalMinLevel
        personalData = c.journalPersonalData
    }
}
