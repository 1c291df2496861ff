/// A hash table from 128-bit keys that are already uniformly random (binary GUIDs, FNV-1a
/// hash pairs) to small integers, for the compactor's and the committer's per-record
/// lookups. Their low bits index it directly with linear probing, so a lookup costs a few
/// loads instead of a SipHash `Hasher` run (the seeding and finalizing of which were ~7% of
/// the compactor's profile through `Dictionary<Guid, Int>` and `Set` of hash pairs).
struct WideKeyTable {
    private var high: [UInt64]
    private var low: [UInt64]
    /// Value + 1 per slot; 0 marks an empty slot.
    private var values: [Int]
    private(set) var count = 0
    private var mask: Int

    init(capacity: Int = 64) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        high = [UInt64](repeating: 0, count: size)
        low = [UInt64](repeating: 0, count: size)
        values = [Int](repeating: 0, count: size)
        mask = size - 1
    }

    /// The value stored for the key, if any.
    func value(high h: UInt64, low l: UInt64) -> Int? {
        var slot = Int(truncatingIfNeeded: l ^ (h >> 29)) & mask
        while values[slot] != 0 {
            if low[slot] == l, high[slot] == h { return values[slot] - 1 }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Stores `value` for the key unless the key is there; returns the value already stored.
    @discardableResult
    mutating func insert(high h: UInt64, low l: UInt64, value: Int) -> Int? {
        if (count + 1) * 2 > values.count { grow() }
        var slot = Int(truncatingIfNeeded: l ^ (h >> 29)) & mask
        while values[slot] != 0 {
            if low[slot] == l, high[slot] == h { return values[slot] - 1 }
            slot = (slot + 1) & mask
        }
        high[slot] = h
        low[slot] = l
        values[slot] = value + 1
        count += 1
        return nil
    }

    /// Every stored key, in slot order.
    var keys: [(high: UInt64, low: UInt64)] {
        values.indices.compactMap { values[$0] != 0 ? (high[$0], low[$0]) : nil }
    }

    private mutating func grow() {
        let old = (high, low, values)
        var bigger = WideKeyTable(capacity: values.count)
        for i in old.2.indices where old.2[i] != 0 {
            bigger.insert(high: old.0[i], low: old.1[i], value: old.2[i] - 1)
        }
        self = bigger
    }
}
