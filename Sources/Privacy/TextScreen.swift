/// A quick look at text before anything is decoded or searched: whether it could hold an
/// e-mail address or a credential at all (`EmailDetector`, `CredentialDetector`), and whether
/// it holds JSON escapes that must be resolved before the answer can be trusted. One table
/// lookup per byte; the few bytes that can start or mark such text (`@`, `%`, `r`, `s`, `k`,
/// `w`, `z`, `J`, `.`, `\`) are checked with a short look around. None of them is a hex
/// digit, so the GUIDs and hashes that fill most records pass without a second look (the
/// look-ups of a pii caller's page). Conservative by design: a
/// "maybe" costs a decode and a search, a wrong "no" would be a leak, so every form the
/// detectors know has its trigger here (`TextScreenTests` holds them against each other).
enum TextScreen {
    struct Findings: OptionSet {
        let rawValue: UInt8
        /// An `@` or `%40`: an e-mail address may stand here.
        static let mail = Findings(rawValue: 1)
        /// A credential's keyword or shape (`bearer`, `basic`, `token`, `secret`, `password`,
        /// `apikey`, `authorization`, `eyJ`, `0.A`).
        static let credential = Findings(rawValue: 2)
        /// A backslash: JSON escapes that may spell anything.
        static let escape = Findings(rawValue: 4)
        /// A `\u` escape: the only escape that can spell a letter.
        static let unicodeEscape = Findings(rawValue: 8)
    }

    /// What `t` may hold; stops early once every finding is in.
    static func screen(_ t: UnsafeBufferPointer<UInt8>) -> Findings {
        var found: Findings = []
        Self.triggers.withUnsafeBufferPointer { table in
            var i = 0
            let n = t.count
            while i < n {
                let kind = table[Int(t[i])]
                if kind != 0, let f = confirm(kind, t, i) {
                    found.formUnion(f)
                    if found == [.mail, .credential, .escape, .unicodeEscape] { return }
                }
                i += 1
            }
        }
        return found
    }

    private static func confirm(_ kind: UInt8, _ t: UnsafeBufferPointer<UInt8>, _ i: Int) -> Findings? {
        switch kind {
        case 1: return .mail
        case 2: return i + 2 < t.count && t[i + 1] == UInt8(ascii: "4") && t[i + 2] == UInt8(ascii: "0") ? .mail : nil
        case 3:
            return i + 1 < t.count && t[i + 1] == UInt8(ascii: "u") ? [.escape, .unicodeEscape] : .escape
        case 4: return TextBytes.hasWord(t, at: i - 3, "bearer") || TextBytes.hasWord(t, at: i - 3, "secret") ? .credential : nil
        case 5:
            return TextBytes.hasWord(t, at: i - 2, "token")
                || (TextBytes.hasWord(t, at: i, "key")
                    && (TextBytes.hasWord(t, at: i - 3, "api") || TextBytes.hasWord(t, at: i - 4, "api")))
                ? .credential : nil
        case 6: return TextBytes.hasWord(t, at: i - 2, "basic") ? .credential : nil
        case 7: return TextBytes.hasWord(t, at: i - 4, "password") || TextBytes.hasWord(t, at: i - 4, "passwd") ? .credential : nil
        case 8: return TextBytes.hasWord(t, at: i - 7, "authorization") ? .credential : nil
        case 9: return i >= 2 && t[i - 1] == UInt8(ascii: "y") && t[i - 2] == UInt8(ascii: "e") ? .credential : nil
        case 10: return i >= 1 && i + 1 < t.count && t[i - 1] == UInt8(ascii: "0") && t[i + 1] == UInt8(ascii: "A") ? .credential : nil
        default: return nil
        }
    }

    /// Which check a byte starts (0: none): a letter of each word that is not a hex digit
    /// (`bearer` and `secret` by their `r`, `basic` by its `s`, `0.A` by its dot).
    static let triggers: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 256)
        t[Int(UInt8(ascii: "@"))] = 1
        t[Int(UInt8(ascii: "%"))] = 2
        t[Int(UInt8(ascii: "\\"))] = 3
        for (letters, kind) in [("rR", 4), ("kK", 5), ("sS", 6), ("wW", 7), ("zZ", 8), ("J", 9), (".", 10)] as [(String, UInt8)] {
            for c in letters.utf8 { t[Int(c)] = kind }
        }
        return t
    }()
}
