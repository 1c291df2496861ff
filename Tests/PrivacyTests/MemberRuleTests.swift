import TestSupport
import Testing

@testable import Privacy

/// The rule a member's name gives its value is looked up for every member of every record
/// shown, through a hash table and a last-byte screen. Generated names (the listed names and
/// credential words in random case, with `_` and `-` anywhere, one byte changed, cut short,
/// grown, non-ASCII, longer than the table's limit) must get the rule of the definition
/// written here with strings: lower-case ASCII; a credential when it ends in a credential
/// word; else the listed rule of the name without `_` and `-`.
@Suite struct MemberRuleTests {
    static let listed: [String: MemberRule] = {
        var rules: [String: MemberRule] = [:]
        for name in MemberNames.identity { rules[name] = .identity }
        for name in MemberNames.objectID { rules[name] = .objectID }
        for name in MemberNames.verboseVisible { rules[name] = .verboseVisible }
        return rules
    }()
    static let credentialWords = CredentialDetector.credentialKeySuffixes.map { String(decoding: $0, as: UTF8.self) }

    static func definition(_ name: [UInt8]) -> MemberRule {
        let lowered = name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        if credentialWords.contains(where: { lowered.count >= $0.utf8.count && lowered.suffix($0.utf8.count).elementsEqual($0.utf8) }) {
            return .credential
        }
        return listed[String(decoding: lowered.filter { $0 != UInt8(ascii: "_") && $0 != UInt8(ascii: "-") }, as: UTF8.self)] ?? .none
    }

    /// A name near the listed ones.
    static func name(_ random: inout SeededRandom) -> [UInt8] {
        var base = Array(random.pick(Array(listed.keys) + credentialWords + ["message", "data", "x", ""]).utf8)
        for _ in 0..<random.below(4) {
            switch random.below(8) {
            case 0: base.insert(random.pick(Array("_-.".utf8)), at: random.below(base.count + 1))
            case 1 where !base.isEmpty: base[random.below(base.count)] ^= UInt8(1 << random.below(8))
            case 2 where !base.isEmpty: base.removeLast(random.below(base.count) + 1)
            case 3: base += Array(random.pick(["user", "Id", "é", "\u{0}", "token", "KEY"]).utf8)
            case 4: base = Array(random.pick(["x_", "my", "Ω"]).utf8) + base
            case 5: base += Array(repeating: UInt8(ascii: "a"), count: 60)
            default: base = base.map { random.below(2) == 0 && $0 >= 0x61 && $0 <= 0x7A ? $0 ^ 0x20 : $0 }
            }
        }
        return base
    }

    @Test func everyGeneratedNameGetsTheRuleOfTheDefinition() {
        var random = SeededRandom(seed: 0x4E41_4D45)
        var seen: [MemberRule: Int] = [:]
        for _ in 0..<60_000 {
            let name = Self.name(&random)
            let expected = Self.definition(name)
            seen[expected, default: 0] += 1
            let got = name.withUnsafeBufferPointer { MemberNames.rule(utf8: $0) }
            #expect(got == expected, "\(String(decoding: name, as: UTF8.self).debugDescription)")
            if got != expected { return }
        }
        // Every rule is reached, so no branch is proved only by its absence.
        for rule in [MemberRule.none, .verboseVisible, .objectID, .identity, .credential] {
            #expect(seen[rule, default: 0] > 1_000, "\(rule): \(seen[rule, default: 0])")
        }
    }

    @Test func theTableHoldsEveryListedNameAndNothingElse() {
        for (name, rule) in Self.listed {
            let bytes = Array(name.utf8)
            #expect(bytes.withUnsafeBufferPointer { MemberNames.table.rule(of: $0, hash: NameTable.Hash.of(bytes)) } == rule, "\(name)")
            // The same hash with other bytes is not a hit.
            let other = bytes + [0x21]
            #expect(other.withUnsafeBufferPointer { MemberNames.table.rule(of: $0, hash: NameTable.Hash.of(bytes)) } == .none)
        }
    }
}
