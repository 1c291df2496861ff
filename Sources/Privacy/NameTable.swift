import Foundation

/// Normalized member names and their rules, in a power-of-two array of slots probed linearly
/// from a name's FNV-1a hash, with the names' bytes side by side in one array.
struct NameTable: Sendable {
    /// FNV-1a, fed one byte at a time.
    struct Hash {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
        mutating func add(_ byte: UInt8) { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }

        static func of(_ bytes: [UInt8]) -> UInt64 {
            var h = Hash()
            for b in bytes { h.add(b) }
            return h.value
        }
    }

    private struct Slot {
        var hash: UInt64 = 0
        var start: Int32 = 0
        /// 0: an empty slot (no table name is empty).
        var count: Int32 = 0
        var rule: MemberRule = .none
    }

    private var slots: [Slot]
    private var bytes: [UInt8] = []
    private let mask: Int

    /// `entries`: names (non-empty, each once) and their rules.
    init(_ entries: [([UInt8], MemberRule)]) {
        var size = 8
        while size < entries.count * 4 { size *= 2 }
        mask = size - 1
        slots = Array(repeating: Slot(), count: size)
        for (name, rule) in entries where !name.isEmpty {
            let hash = Hash.of(name)
            var i = Int(truncatingIfNeeded: hash) & mask
            while slots[i].count != 0 { i = (i + 1) & mask }
            slots[i] = Slot(hash: hash, start: Int32(bytes.count), count: Int32(name.count), rule: rule)
            bytes += name
        }
    }

    /// The rule of `name`, whose `Hash` is `hash`; `.none` when the table does not hold it.
    func rule(of name: UnsafeBufferPointer<UInt8>, hash: UInt64) -> MemberRule {
        var i = Int(truncatingIfNeeded: hash) & mask
        while slots[i].count != 0 {
            let slot = slots[i]
            if slot.hash == hash, Int(slot.count) == name.count,
                bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress! + Int(slot.start), name.baseAddress!, name.count) == 0 })
            {
                return slot.rule
            }
            i = (i + 1) & mask
        }
        return .none
    }
}
