public import Crypto
import Foundation

/// Stable keyed pseudonyms for personal values (UPNs, emails, object ids) and keyed digests
/// of text a caller may not read. The same value always maps to the same pseudonym under one
/// key, so one user's records still line up across queries, bundles and the journal, while
/// the raw value cannot be recovered or guessed by hashing candidate UPNs without the key
/// (that is why this is an HMAC, not a plain hash). The key is `PseudonymKeyFile`'s.
public struct Pseudonymizer: Sendable {
    /// The key, its pads hashed once (`KeyedMAC`).
    private let keyed: KeyedMAC
    private static let hexDigits = Array("0123456789abcdef".utf8)

    public init(key: SymmetricKey) { keyed = KeyedMAC(key: key) }

    /// The pseudonym of a person's identity (UPN): `user-` and 24 hex digits. The one
    /// function behind every place an identity is hidden — `identity` fields and e-mail
    /// addresses in query answers and bundles, and `MAM_IDENTITY_HASH` in the journal — so
    /// a pseudonym seen anywhere can be used as a filter everywhere
    /// (`journalctl MAM_IDENTITY_HASH=user-…`). Identities are case-insensitive.
    public func identityPseudonym(_ identity: String) -> String {
        pseudonym(identity, kind: "user")
    }

    /// The pseudonym shown in place of a value: `user-3f9a...` style, tagged with its kind.
    /// Values are compared case-insensitively (UPNs, e-mail addresses, GUIDs are).
    public func pseudonym(_ value: String, kind: String) -> String {
        pseudonym(message: "\(kind):\(value.lowercased())", kind: kind)
    }

    /// The same pseudonym from the message `pseudonym(_:kind:)` authenticates: `kind`, `:`
    /// and the value lower-cased. For a caller that has made it already (as a cache key).
    func pseudonym(message: String, kind: String) -> String {
        "\(kind)-\(mac(message))"
    }

    /// A keyed digest of text shown as withheld (`text-` and 24 hex digits): equal texts
    /// have equal digests, so a repeated message is still recognisable, but the text cannot
    /// be tested for without the key. Case-sensitive, unlike identities.
    public func textDigest(_ text: String) -> String {
        "text-\(mac("text:\(text)"))"
    }

    /// Hex of the first 12 bytes of HMAC-SHA256(key, message): short enough to read, long
    /// enough not to collide in any realistic fleet.
    private func mac(_ message: String) -> String {
        var message = message
        let code = message.withUTF8 { keyed.code(UnsafeRawBufferPointer($0)) }
        // Hex by table: `String(format:)` per byte cost more than the HMAC itself.
        return code.withUnsafeBytes { bytes in
            String(unsafeUninitializedCapacity: 24) { hex in
                for i in 0..<12 {
                    hex[2 * i] = Self.hexDigits[Int(bytes[i] >> 4)]
                    hex[2 * i + 1] = Self.hexDigits[Int(bytes[i] & 0x0F)]
                }
                return 24
            }
        }
    }
}
