import Foundation
import TestSupport

/// What the privacy property plants in generated records. Every secret carries a core (a
/// random token that appears nowhere else), so a leak is a core found in any decoded string a
/// reader is shown, whatever spelling the secret was planted in.
struct Planted: Sendable {
    /// E-mail addresses (their local parts) and identity values: hidden from a caller without
    /// `pii`, shown to one with it.
    var personal: Set<String> = []
    /// Credentials: hidden from every caller.
    var credentials: Set<String> = []
    /// Verbose-only text (verbose records, incident descriptions): hidden without `pii`.
    var markers: Set<String> = []

    mutating func formUnion(_ other: Planted) {
        personal.formUnion(other.personal)
        credentials.formUnion(other.credentials)
        markers.formUnion(other.markers)
    }
}

/// A piece of JSON string contents: as written into a body (`raw`, escapes and all) and as a
/// reader decodes it.
struct Piece {
    var raw: String
    var decoded: String

    init(raw: String, decoded: String) {
        self.raw = raw
        self.decoded = decoded
    }

    /// Plain text, escaped only where JSON must.
    init(_ text: String) {
        raw = Piece.escape(text)
        decoded = text
    }

    static func + (a: Piece, b: Piece) -> Piece { Piece(raw: a.raw + b.raw, decoded: a.decoded + b.decoded) }

    /// `"raw"`.
    var json: String { "\"\(raw)\"" }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if c.value < 0x20 { out += String(format: "\\u%04x", c.value) } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }
}

/// Generates text, member names and values with secrets planted at random places and in
/// random spellings (JSON escapes, URL encoding, non-ASCII, multi-line text), recording each
/// in `planted`.
struct SecretGenerator {
    var rng: SeededRandom
    var planted = Planted()

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    mutating func hex(_ n: Int) -> String {
        String((0..<n).map { _ in "0123456789abcdef".randomElement(using: &rng)! })
    }

    mutating func chance(_ p: Double) -> Bool { rng.unit() < p }

    static let words = ["policy", "sync", "check-in", "retry", "window", "opened", "done", "failed", "ok", "attachment", "viewer"]

    mutating func word() -> String { rng.pick(Self.words) }

    // MARK: - Secrets

    /// An e-mail address in one of the spellings a client may use.
    mutating func email() -> Piece {
        let core = "pm" + hex(10)
        planted.personal.insert(core)
        let domain = "d\(hex(6)).example"
        switch rng.below(7) {
        case 0: return Piece("\(core)@\(domain)")
        case 1: return Piece("\(core).Doe@Contoso-\(hex(4)).COM")
        case 2: return Piece("jö\(core)@müller\(hex(4)).de")
        case 3: return Piece(raw: "\(core)\\u0040\(domain)", decoded: "\(core)@\(domain)")
        case 4: return Piece("\(core)%40\(domain)")
        case 5: return Piece(raw: "\\u0070\(core.dropFirst())@\(domain)", decoded: "\(core)@\(domain)")
        default: return Piece("Ωμέγα\(core)@παράδειγμα\(hex(3)).ελ")
        }
    }

    /// A value of an identity member: an address or a person's name.
    mutating func identityValue() -> Piece {
        if chance(0.5) { return email() }
        let core = "pn" + hex(10)
        planted.personal.insert(core)
        return Piece("Jane \(core) Roe")
    }

    /// A credential in running text, in one of the forms clients log.
    mutating func credential() -> Piece {
        let core = "cr" + hex(12)
        planted.credentials.insert(core)
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJ\(core)\(hex(8)).\(hex(20))"
        switch rng.below(13) {
        case 0: return Piece(jwt)
        case 1: return Piece("Authorization: Bearer\t ya29.\(core)Q1")
        case 2: return Piece("Authorization=Bearer%20\(core)Xy9")
        case 3: return Piece("GET /me?access_token=\(jwt)&x=1")
        case 4: return Piece("refresh_token=0.A\(core)\(hex(40))")
        case 5: return Piece("code 0.AXoA\(core)\(hex(40))")
        case 6:
            planted.credentials.remove(core)
            let basic = Data("u\(hex(4)):\(core)".utf8).base64EncodedString()
            planted.credentials.insert(basic)
            return Piece("Authorization: Basic \(basic)")
        case 7: return Piece("client_secret=\(core)")
        case 8: return Piece("pin password=\(core) ok")
        case 9: return Piece("{\"token_type\":\"Bearer\",\"refresh_token\":\"\(core)\"}")
        case 10: return Piece("id_token=\(jwt)")
        case 11: return Piece(raw: "access\\u005ftoken=\(core)Z", decoded: "access_token=\(core)Z")
        default: return Piece("x-api-key: \(core)")
        }
    }

    mutating func marker() -> Piece {
        let core = "mk" + hex(12)
        planted.markers.insert(core)
        return Piece("note \(core)")
    }

    /// Prose with secrets among it; markers only where the text is withheld (`verbose`);
    /// `multiline` allows line breaks.
    mutating func text(verbose: Bool, multiline: Bool = true) -> Piece {
        var text = Piece(word())
        for _ in 0..<rng.below(5) {
            let separator = multiline && chance(0.3) ? "\n" : chance(0.2) ? ", " : " "
            let next: Piece
            switch rng.below(verbose ? 4 : 3) {
            case 0: next = email()
            case 1: next = credential()
            case 2: next = Piece(word())
            default: next = marker()
            }
            text = text + Piece(separator) + next
        }
        return text
    }

    // MARK: - Structure

    enum NameKind { case plain, email, identity, credential, nestedAllowListed }

    /// A member name not yet in `used`, and what kind of member it is.
    mutating func name(used: inout Set<String>, nested: Bool) -> (Piece, NameKind) {
        while true {
            let (piece, kind): (Piece, NameKind)
            switch rng.below(nested ? 6 : 5) {
            case 0: (piece, kind) = (Piece(rng.pick(["note", "ctx", "info", "args", "details", "extra", "list"]) + hex(2)), .plain)
            case 1: (piece, kind) = (email(), .email)
            case 2:
                (piece, kind) = (
                    rng.pick([
                        Piece(raw: "us\\u0065r", decoded: "user"), Piece(raw: "identit\\u0079", decoded: "identity"),
                        Piece(raw: "e\\u006dail", decoded: "email"), Piece("user.name"), Piece("user.full_name"), Piece("user.id"),
                        Piece("enduser.pseudo.id"), Piece("login_hint"), Piece("upn"), Piece("displayName"),
                    ]), .identity
                )
            case 3:
                (piece, kind) = (
                    rng.pick([
                        Piece("refresh_token"), Piece("accessToken"), Piece("x_token"), Piece("client_secret"), Piece("password"),
                        Piece(raw: "id\\u005ftoken", decoded: "id_token"),
                    ]), .credential
                )
            case 4: (piece, kind) = (Piece("n" + hex(3)), .plain)
            default: (piece, kind) = (Piece(rng.pick(["thread", "component", "level", "appId"])), .nestedAllowListed)
            }
            if used.insert(piece.decoded).inserted { return (piece, kind) }
        }
    }

    /// `count` members (`"name":value` pairs, without braces) for an object at `depth`.
    mutating func members(_ count: Int, verbose: Bool, depth: Int, used: inout Set<String>) -> [String] {
        (0..<count).map { _ in
            let (name, kind) = self.name(used: &used, nested: depth > 0)
            return "\(name.json):\(value(for: kind, verbose: verbose, depth: depth))"
        }
    }

    /// A value for a member of `kind`.
    mutating func value(for kind: NameKind, verbose: Bool, depth: Int) -> String {
        switch kind {
        case .identity: return chance(0.2) ? String(rng.below(1_000_000)) : identityValue().json
        case .credential:
            let core = "cr" + hex(12)
            planted.credentials.insert(core)
            return Piece(core).json
        case .nestedAllowListed:
            // Nested, an allow-listed name is anybody's text: only a verbose record's is withheld.
            return text(verbose: verbose).json
        case .plain, .email: return anyValue(verbose: verbose, depth: depth)
        }
    }

    mutating func anyValue(verbose: Bool, depth: Int) -> String {
        switch rng.below(depth < 3 ? 7 : 4) {
        case 0: return String(rng.below(100_000))
        case 1: return rng.pick(["true", "false", "null", "-2.5e3"])
        case 2, 3: return text(verbose: verbose).json
        case 4:
            var used = Set<String>()
            return "{" + members(rng.below(4), verbose: verbose, depth: depth + 1, used: &used).joined(separator: ",") + "}"
        default:
            let elements = (0..<rng.below(4)).map { _ in anyValue(verbose: verbose, depth: depth + 1) }
            return "[" + elements.joined(separator: ",") + "]"
        }
    }
}
