/// How text a caller may not read is shown: `[withheld: 57 chars, text-3f9a…]` — its length
/// and a keyed digest (`Pseudonymizer.textDigest`), never the text. Used for verbose-level
/// log text (which may hold names, tokens, anything the app logged) and incident
/// descriptions (free text a user typed), wherever a caller without the `pii` scope sees
/// stored data: query answers, follow streams, incident views, bundles and, by default, the
/// journal mirror. Equal texts give equal markers, so repetitions still line up.
public enum WithheldText {
    /// The marker shown in place of `text`.
    public static func marker(for text: String, pseudonymizer: Pseudonymizer) -> String {
        "[withheld: \(text.count) chars, \(pseudonymizer.textDigest(text))]"
    }

    /// Whether `text` is exactly a marker (as the journal holds a verbose message the mirror
    /// already withheld): such text is shown as it is rather than withheld a second time.
    public static func isMarker(_ text: String) -> Bool {
        text.wholeMatch(of: /\[withheld: [0-9]+ chars, text-[0-9a-f]{24}\]/) != nil
    }
}
