/// How many values a bundle's redaction replaced, by kind, for the manifest: a reader can
/// see what was hidden without seeing it.
public struct RedactionCounts: Sendable, Hashable, Codable {
    /// UPNs and email addresses (identity fields and addresses inside any text).
    public var upn = 0
    /// Entra object ids in `accountId`/`oid`-like fields.
    public var objectId = 0
    /// Bearer tokens and JWTs.
    public var token = 0
    /// Verbose-level log records whose text went through the scrubber.
    public var verboseMessagesScrubbed = 0

    public init() {}

    public var total: Int { upn + objectId + token }
}
