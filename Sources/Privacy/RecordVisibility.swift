public import TelemetryModel

/// What one caller may see of stored data: the single rule behind every exit a caller reads
/// (query answers, follow streams, incident views, stats group keys, every bundle member) and
/// behind the journal mirror, which writes what a caller without `pii` may see unless the
/// operator opts in. For every caller, credentials (bearer and Basic credentials, JWTs,
/// refresh and access tokens, `…_token`/`…secret`/`password` values) become a keyed mask
/// (`token-…`). With the `pii` scope everything else is shown as stored. Without it: UPNs
/// and e-mail addresses (in any member name, value or text) and Entra object ids become
/// stable keyed pseudonyms (`user-…`, `oid-…`), and text that may hold anything personal
/// (every free-text value of a verbose-level log record, an incident's description) is
/// withheld (`WithheldText`: its length and a keyed digest).
///
/// As a `RecordPresenter` (see Bundles) it is handed to the store with a query, so
/// `contains` is matched against exactly what the caller is shown.
public struct RecordVisibility: Sendable {
    public let piiAllowed: Bool
    public let pseudonymizer: Pseudonymizer
    /// Pseudonyms computed for this caller so far: one visibility serves one request, and
    /// every record it presents shares them.
    let pseudonyms = PseudonymCache()

    public init(piiAllowed: Bool, pseudonymizer: Pseudonymizer) {
        self.piiAllowed = piiAllowed
        self.pseudonymizer = pseudonymizer
    }

    /// The worker applying these rules, with its own counts (bundle manifests).
    public func redactor() -> RecordRedactor {
        RecordRedactor(pseudonymizer: pseudonymizer, enabled: !piiAllowed, cache: pseudonyms)
    }

    /// One stored record's JSON as this caller sees it (`verbose`: the record's level).
    public func present(json: [UInt8], verbose: Bool) -> [UInt8] {
        var redactor = redactor()
        return redactor.redact(json: json, verbose: verbose).json
    }

    /// As above on borrowed bytes: nil when the caller sees the stored bytes as they are.
    public func shownJSON(_ stored: UnsafeBufferPointer<UInt8>, verbose: Bool) -> [UInt8]? {
        var redactor = redactor()
        return redactor.redact(json: stored, verbose: verbose, capture: .none).json
    }

    /// A lone identity value (an incident's reporter).
    public func identity(_ value: String?) -> String? {
        var redactor = redactor()
        return redactor.redactIdentity(value)
    }

    /// Free text a user typed (an incident's description): withheld without `pii`.
    public func freeText(_ value: String?) -> String? {
        var redactor = redactor()
        return redactor.freeText(value)
    }

    /// A client string shown on its own (a stats group key, an incident's app or device id):
    /// credentials masked, e-mail addresses pseudonymized without `pii`.
    public func text(_ value: String) -> String {
        var redactor = redactor()
        return redactor.scrub(text: value)
    }

    /// A record's index keys as this caller sees them (timelines, summaries, the journal).
    public func keys(_ keys: RecordKeys) -> RecordKeys {
        var redactor = redactor()
        return redactor.shown(keys)
    }
}
