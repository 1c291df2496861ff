import Crypto
import Foundation
import TestSupport
import Testing

@testable import Privacy

/// Pseudonyms are what support engineers filter by across queries, bundles and the journal,
/// so they must not change when the way they are computed does: the pre-keyed HMAC is held
/// against values computed elsewhere (Python's `hmac`) and against swift-crypto's one-shot
/// HMAC, keyed per message, on generated values, from many tasks sharing one pseudonymizer.
struct PseudonymizerTests {
    static var key: SymmetricKey { SymmetricKey(data: Array(0..<32) as [UInt8]) }

    /// `hmac.new(bytes(range(32)), message, hashlib.sha256).hexdigest()[:24]` in Python.
    @Test func pseudonymsMatchAnHMACComputedElsewhere() {
        let p = Pseudonymizer(key: Self.key)
        #expect(p.identityPseudonym("Jane@Contoso.com") == "user-cbd402869dd7bb9123b52d1a")
        #expect(p.textDigest("Token refresh failed") == "text-137e63797d03e7872f70f2aa")
        #expect(p.pseudonym("ÉLÈVE-中", kind: "oid") == "oid-be350ad5eb89551607ade391")
    }

    /// Keys shorter than, as long as and longer than SHA-256's 64-byte block (a longer key is
    /// hashed first), on messages around the block size: the pre-keyed MAC is swift-crypto's HMAC.
    @Test(arguments: [0, 1, 31, 32, 63, 64, 65, 100, 200])
    func theKeyedMACIsHMACForEveryKeyLength(length: Int) {
        var rng = SeededRandom(seed: UInt64(length))
        let keyBytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let mac = KeyedMAC(key: SymmetricKey(data: keyBytes))
        for size in [0, 1, 55, 56, 63, 64, 65, 128, 1_000] {
            let message = (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let expected = Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: keyBytes)))
            #expect(message.withUnsafeBytes { Array(mac.code($0)) } == expected, "key \(length) bytes, message \(size) bytes")
        }
    }

    /// The definition: HMAC-SHA256 keyed afresh for the one message, its first 12 bytes in hex.
    static func oracle(_ message: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: key)
        return code.prefix(12).map { String(format: "%02x", $0) }.joined()
    }

    static func value(_ rng: inout SeededRandom) -> String {
        let alphabets: [[Character]] = [
            Array("abcdefghijklmnopqrstuvwxyz0123456789@.-_"), Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), Array("éÈßİıΣς中文🙂\u{0301}"),
            [" ", ":", "\n"],
        ]
        // Lengths around SHA-256's 64-byte block, where one block becomes two.
        let length = rng.pick([0, 1, 7, 30, 55, 56, 57, 63, 64, 65, 119, 200])
        return String((0..<length).map { _ in rng.pick(rng.pick(alphabets)) })
    }

    @Test func everyPathAgreesWithAFreshlyKeyedHMACUnderConcurrency() async {
        let p = Pseudonymizer(key: Self.key)
        let mismatches = await withTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var rng = SeededRandom(seed: 0x5EED_0000 + UInt64(task))
                    var wrong: [String] = []
                    for _ in 0..<2_000 {
                        let value = Self.value(&rng)
                        let kind = rng.pick(["user", "token", "oid"])
                        let expected = "\(kind)-\(Self.oracle("\(kind):\(value.lowercased())"))"
                        if p.pseudonym(value, kind: kind) != expected { wrong.append("pseudonym \(kind) \(value.debugDescription)") }
                        if p.pseudonym(message: "\(kind):\(value.lowercased())", kind: kind) != expected {
                            wrong.append("pseudonym(message:) \(kind) \(value.debugDescription)")
                        }
                        if p.textDigest(value) != "text-\(Self.oracle("text:\(value)"))" {
                            wrong.append("textDigest \(value.debugDescription)")
                        }
                    }
                    return wrong
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// The redactor's cached path (a key it makes, a cache hit, the last value again) gives the
    /// pseudonymizer's answer; ASCII spellings of one value share it.
    @Test func theRedactorsCacheGivesThePseudonymizersAnswer() {
        let p = Pseudonymizer(key: Self.key)
        var redactor = RecordRedactor(pseudonymizer: p, enabled: true)
        var rng = SeededRandom(seed: 42)
        var seen: [(String, String)] = []
        for _ in 0..<3_000 {
            let (value, kind) = seen.isEmpty || rng.below(3) > 0 ? (Self.value(&rng), rng.pick(["user", "token", "oid"])) : rng.pick(seen)
            seen.append((value, kind))
            #expect(redactor.pseudonym(value, kind: kind) == p.pseudonym(value, kind: kind))
        }
        #expect(redactor.pseudonym("Jane@Contoso.COM", kind: "user") == p.identityPseudonym("jane@contoso.com"))
    }
}
