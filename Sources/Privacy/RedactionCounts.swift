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

    /// Counts the pseudonyms and masks `text` holds (`user-…`, `oid-…`, `token-…` and 24 hex
    /// digits), for text that may have been redacted before it was read.
    mutating func countMarkers(in text: String) {
        let b = Array(text.utf8)
        var i = 0
        while i < b.count {
            var matched = false
            for (prefix, kind) in [("user-", 0), ("oid-", 1), ("token-", 2)] where b.count - i >= prefix.utf8.count + 24 {
                guard b[i..<(i + prefix.utf8.count)].elementsEqual(prefix.utf8) else { continue }
                let hex = b[(i + prefix.utf8.count)..<(i + prefix.utf8.count + 24)]
                guard hex.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else { continue }
                switch kind {
                case 0: upn += 1
                case 1: objectId += 1
                default: token += 1
                }
                i += prefix.utf8.count + 24
                matched = true
                break
            }
            if !matched { i += 1 }
        }
    }

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
