import Bundles
import Privacy
import Systemd
import TelemetryModel

/// Mirrors stored diagnostic log records into the systemd journal through the `Systemd`
/// target's queue (never blocking ingest). The identity becomes `MAM_IDENTITY_HASH`, the
/// same `user-…` pseudonym queries and bundles show (`mamtelemetryctl pseudonym <upn>`
/// prints it for `journalctl MAM_IDENTITY_HASH=…`); verbose text is withheld the way a
/// query without the `pii` scope shows it, unless `journal.verboseMessages: raw`.
struct JournalLogMirror: LogRecordMirror {
    let mirror: JournalMirror
    let pseudonymizer: Pseudonymizer

    func mirror(_ records: [DecodedRecord], env: TelemetryEnvironment) {
        let pseudonymizer = self.pseudonymizer
        mirror.submit(
            records, env: env, identityHash: { pseudonymizer.identityPseudonym($0) },
            withhold: { WithheldText.marker(for: $0, pseudonymizer: pseudonymizer) })
    }
}

extension JournalMirrorConfiguration {
    init(_ c: ServerConfiguration) {
        self.init()
        enabled = c.journalMirror
        minimumLevel = c.journalMinLevel
        verboseMessages = c.journalVerboseMessages
    }
}
