/// The bundle redaction pass, for other readers of stored records (query answers, follow
/// streams, incident views): a caller without the `pii` scope sees the same stable
/// pseudonyms a redacted bundle shows, so a query and a bundle of the same user line up.
public struct PersonalDataRedactor: Sendable {
    private var redactor: RecordRedactor

    public init(pseudonymizer: Pseudonymizer) {
        redactor = RecordRedactor(pseudonymizer: pseudonymizer, enabled: true)
    }

    /// One stored JSON record with UPNs/emails, object ids and bearer-like tokens replaced.
    public mutating func redact(_ json: [UInt8]) -> [UInt8] {
        redactor.redact(json: json).json
    }

    /// A lone identity value (e.g. an incident's reporter).
    public mutating func redactIdentity(_ value: String?) -> String? {
        redactor.redactIdentity(value)
    }
}
