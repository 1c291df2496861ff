import Crypto
import Foundation

/// Stable keyed pseudonyms for personal values (UPNs, emails, object ids). The same value
/// always maps to the same pseudonym under one key, so one user's records still line up in
/// a bundle or a journal query, while the raw value cannot be recovered or guessed by
/// hashing candidate UPNs without the key (that is why this is an HMAC, not a plain hash).
public struct Pseudonymizer: Sendable {
    /// Raw key bytes: `SymmetricKey` is not `Sendable` in this swift-crypto version.
    private let keyBytes: [UInt8]

    public init(key: SymmetricKey) { keyBytes = key.withUnsafeBytes { Array($0) } }

    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    /// Loads the daemon's key from `path`, creating a random 256-bit key (mode 0600) on
    /// first use, so pseudonyms stay stable across restarts.
    public static func load(from path: URL) throws -> Pseudonymizer {
        if let data = try? Data(contentsOf: path), data.count == 32 {
            return Pseudonymizer(key: SymmetricKey(data: data))
        }
        let key = SymmetricKey(size: .bits256)
        let data = key.withUnsafeBytes { Data($0) }
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: path.path, contents: data, attributes: [.posixPermissions: 0o600])
        return Pseudonymizer(key: key)
    }

    /// Hex of the first 12 bytes of HMAC-SHA256(key, kind ":" lower-cased value): short
    /// enough to read, long enough not to collide in any realistic fleet.
    public func hash(_ value: String, kind: String = "identity") -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(kind):\(value.lowercased())".utf8), using: key)
        return mac.prefix(12).map { String(format: "%02x", $0) }.joined()
    }

    /// The pseudonym shown in place of a value: `user-3f9a...` style, tagged with its kind.
    public func pseudonym(_ value: String, kind: String) -> String {
        "\(kind)-\(hash(value, kind: kind))"
    }
}
