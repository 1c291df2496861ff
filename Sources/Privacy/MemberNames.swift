import TelemetryModel

/// What a member's name says about its value, decided on the decoded name (so `"us\u0065r"`
/// is `user`), ASCII case-insensitively and with `_` and `-` ignored (`login_hint` is
/// `loginHint`).
enum MemberRule: UInt8, Comparable {
    case none
    /// Shown in a verbose record when it is a top-level member: where and when the record
    /// was logged, never what.
    case verboseVisible
    /// An Entra object id: pseudonymized (`oid-…`) when the value is a GUID.
    case objectID
    /// A person's identity or name: pseudonymized (`user-…`) whatever the value, and so is
    /// everything nested inside it.
    case identity
    /// A credential: masked (`token-…`) for every caller, and everything nested inside it.
    case credential

    static func < (a: MemberRule, b: MemberRule) -> Bool { a.rawValue < b.rawValue }

    /// Whether the rule passes on to the values nested in the member's object or array.
    var isInherited: Bool { self >= .objectID }
}

enum MemberNames {
    /// Members holding a UPN, a user's name or another direct identifier as their value,
    /// including OpenTelemetry's `user.*` and `enduser.*` attributes (the OTLP mapping keeps
    /// an attribute as a member of that name, at the top of a log record, in an event's
    /// `data` or in `resource`).
    static let identity: [String] = [
        "identity", "upn", "userprincipalname", "username", "email", "emailaddress", "mail", "loginhint", "user",
        "displayname", "fullname", "givenname", "surname", "firstname", "lastname", "phonenumber", "mobilephone",
        "user.name", "user.fullname", "user.id", "user.email", "user.hash", "enduser.id", "enduser.pseudo.id",
    ]
    /// Members holding an Entra object id.
    static let objectID: [String] = [
        "accountid", "oid", "objectid", "userobjectid", "aadobjectid", "entraobjectid", "userid", "homeaccountid",
    ]
    /// The top-level members of a verbose record whose text stays visible. Every other
    /// string of a verbose record (`message`, any free field an app adds, anything nested or
    /// in an array) is withheld, so a new field cannot leak what `message` may not.
    static let verboseVisible: [String] =
        [
            "time", "level", "component", "category", "appid", "appversion", "sdkversion", "platform", "deviceid",
            "sessionid", "eventid", "incident", "env", "receivedat", "thread", "tenantid",
        ] + (AppFlags.Key.telemetryDisabled + AppFlags.Key.usePPE + AppFlags.Key.verboseLogging).map { $0.lowercased() }

    /// The normalized names above in an open-addressing table keyed by a hash of their bytes
    /// (verified on a hit): a lookup runs for every member of every record shown, so it
    /// allocates nothing and hashes the name once, in the same pass that normalizes it.
    static let table = NameTable(
        [(identity, MemberRule.identity), (objectID, .objectID), (verboseVisible, .verboseVisible)].flatMap { names, rule in
            names.map { (Array($0.utf8), rule) }
        })

    /// The rule a member named `name` (decoded UTF-8) gets.
    static func rule(utf8 name: UnsafeBufferPointer<UInt8>) -> MemberRule {
        guard name.count <= 64 else {
            // No table name is this long; only a credential suffix can match.
            return name.map(TextBytes.lower).withUnsafeBufferPointer(CredentialDetector.isCredentialKey) ? .credential : .none
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer -> MemberRule in
            for k in 0..<name.count { buffer[k] = TextBytes.lower(name[k]) }
            // The credential suffixes keep their punctuation (`api_key`); the tables do not.
            if CredentialDetector.isCredentialKey(UnsafeBufferPointer(rebasing: buffer[..<name.count])) { return .credential }
            var normalized = 0
            var hash = NameTable.Hash()
            for k in 0..<name.count where buffer[k] != UInt8(ascii: "_") && buffer[k] != UInt8(ascii: "-") {
                buffer[normalized] = buffer[k]
                hash.add(buffer[k])
                normalized += 1
            }
            return table.rule(of: UnsafeBufferPointer(rebasing: buffer[..<normalized]), hash: hash.value)
        }
    }
}
