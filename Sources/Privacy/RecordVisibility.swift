import TelemetryModel

/// What one caller may see of stored data — the single rule behind query answers, follow
/// streams, incident views and bundles. With the `pii` scope: everything as stored.
/// Without it: UPNs and e-mail addresses (in any field or text), Entra object ids and
/// bearer-like tokens become stable keyed pseudonyms (`user-…`, `oid-…`, `token-…`), and text
/// that may hold anything personal — every free-text value of a verbose-level log record and
/// an incident's description — is withheld (`WithheldText`: its length and a keyed digest).
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

    /// The byte-level worker applying these rules, with its own counts (bundle manifests).
    public func redactor() -> RecordRedactor {
        RecordRedactor(pseudonymizer: pseudonymizer, enabled: !piiAllowed, cache: pseudonyms)
    }

    /// One stored record's JSON as this caller sees it (`verbose`: the record's level).
    public func present(json: [UInt8], verbose: Bool) -> [UInt8] {
        guard !piiAllowed else { return json }
        var redactor = redactor()
        return redactor.redact(json: json, verbose: verbose).json
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
}
