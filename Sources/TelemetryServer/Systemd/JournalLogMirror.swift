import Bundles
import Journal
import TelemetryModel

/// Mirrors stored diagnostic log records into the systemd journal through the `Journal`
/// target's queue (never blocking ingest), with the identity replaced by its keyed hash.
struct JournalLogMirror: LogRecordMirror {
    let mirror: JournalMirror
    let pseudonymizer: Pseudonymizer

    func mirror(_ records: [DecodedRecord], env: TelemetryEnvironment) {
        let pseudonymizer = self.pseudonymizer
        mirror.submit(records, env: env, identityHash: { pseudonymizer.hash($0) })
    }
}

extension JournalMirrorConfiguration {
    init(_ c: ServerConfiguration) {
        self.init()
        enabled = c.journalMirror
        minimumLevel = c.journalMinLevel
    }
}
