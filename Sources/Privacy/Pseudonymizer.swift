public import Crypto
import Foundation

/// Stable keyed pseudonyms for personal values (UPNs, emails, object ids) and keyed digests
/// of text a caller may not read. The same value always maps to the same pseudonym under one
/// key, so one user's records still line up across queries, bundles and the journal, while
/// the raw value cannot be recovered or guessed by hashing candidate UPNs without the key
/// (that is why this is an HMAC, not a plain hash). The key is `PseudonymKeyFile`'s.
public struct Pseudonymizer: Sendable {
    /// Raw key bytes: `SymmetricKey` is not `Sendable` in this swift-crypto version.
    private let keyBytes: [UInt8]
    private static let hexDigits = Array("0123456789abcdef".utf8)

    public init(key: SymmetricKey) { keyBytes = key.withUnsafeBytes { Array($0) } }

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
        "\(kind)-\(mac("\(kind):\(value.lowercased())"))"
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
        let code = HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: SymmetricKey(data: keyBytes))
        // Hex by table: `String(format:)` per byte cost more than the HMAC itself.
        var hex: [UInt8] = []
        hex.reserveCapacity(24)
        for byte in code.prefix(12) {
            hex.append(Self.hexDigits[Int(byte >> 4)])
            hex.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
