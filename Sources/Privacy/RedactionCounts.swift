/// How many values redaction replaced, by kind, for a bundle's manifest: a reader can see
/// what was hidden without seeing it. Every count is of replacements actually made, so each
/// one equals what can be counted in the file it was made in (`user-…`, `oid-…`, `token-…`
/// pseudonyms and `[withheld: …]` markers).
public struct RedactionCounts: Sendable, Hashable, Codable {
    /// UPNs and email addresses (identity fields and addresses inside any text).
    public var upn = 0
    /// Entra object ids in `accountId`/`oid`-like fields.
    public var objectId = 0
    /// Bearer tokens and JWTs.
    public var token = 0
    /// Text values shown as a `WithheldText` marker (verbose log text, incident descriptions,
    /// verbose journal lines — also those the journal mirror had already withheld).
    public var textWithheld = 0
    /// Verbose-level log records of which at least one text value was withheld.
    public var verboseMessagesScrubbed = 0

    public init() {}

    public var total: Int { upn + objectId + token + textWithheld }

    /// What was done between two snapshots, for per-file counts.
    public func since(_ earlier: RedactionCounts) -> RedactionCounts {
        var d = RedactionCounts()
        d.upn = upn - earlier.upn
        d.objectId = objectId - earlier.objectId
        d.token = token - earlier.token
        d.textWithheld = textWithheld - earlier.textWithheld
        d.verboseMessagesScrubbed = verboseMessagesScrubbed - earlier.verboseMessagesScrubbed
        return d
    }
}
