/// A mergeable histogram of durations with a fixed relative precision, so the hourly rollups
/// can answer duration percentiles over any run of hours without keeping every value.
///
/// Each value is rounded toward zero to `mantissaBits` significant binary digits after the
/// leading one (the top bits of its IEEE 754 representation) and counted under that rounded
/// value. The rounding is monotone, so the nearest-rank percentile of the sketch is exactly the
/// rounded nearest-rank percentile of the values themselves: answers from rollups, from records
/// or from both merged are identical, and each is at most 2^-7 (0.79%) below the exact value.
/// Values with at most eight significant bits (every whole millisecond below 256, and round
/// values like 300, 1000 or 4000) come back unchanged.
public struct LatencySketch: Sendable, Hashable {
    /// Mantissa bits kept: 128 buckets per power of two.
    public static let mantissaBits = 7
    /// The largest relative error of an answered percentile (always toward zero).
    public static let relativeError = 1.0 / Double(1 << mantissaBits)

    /// The occupied buckets, as ``ordinal(of:)`` keys in ascending (value) order with their
    /// counts beside them. Sorted arrays rather than a dictionary: a 30-day report merges
    /// thousands of hourly sketches, and merging sorted runs is a linear walk with no
    /// hashing, decoding the stored form (already in key order) is appending, and
    /// percentiles need no sort.
    private var keys: [UInt32] = []
    private var counts: [Int] = []

    public init() {}

    /// How many values the sketch holds.
    public var total: Int { counts.reduce(0, Int.saturatingSum) }

    public var isEmpty: Bool { keys.isEmpty }

    /// Counts `value`; infinities and NaN are not durations and are ignored.
    public mutating func add(_ value: Double, count: Int = 1) {
        guard value.isFinite, count > 0 else { return }
        let key = Self.ordinal(of: value)
        // Most values land at or near the top (durations arrive unsorted, but a record path
        // adds into small sketches): a binary search finds the slot either way.
        var low = 0
        var high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid] < key { low = mid + 1 } else { high = mid }
        }
        if low < keys.count, keys[low] == key {
            counts[low] = Int.saturatingSum(counts[low], count)
        } else {
            keys.insert(key, at: low)
            counts.insert(count, at: low)
        }
    }

    public mutating func merge(_ other: LatencySketch) {
        if other.keys.isEmpty { return }
        if keys.isEmpty {
            self = other
            return
        }
        var mergedKeys: [UInt32] = []
        var mergedCounts: [Int] = []
        mergedKeys.reserveCapacity(keys.count + other.keys.count)
        mergedCounts.reserveCapacity(keys.count + other.keys.count)
        var i = 0
        var j = 0
        while i < keys.count || j < other.keys.count {
            if j == other.keys.count || (i < keys.count && keys[i] < other.keys[j]) {
                mergedKeys.append(keys[i])
                mergedCounts.append(counts[i])
                i += 1
            } else if i == keys.count || other.keys[j] < keys[i] {
                mergedKeys.append(other.keys[j])
                mergedCounts.append(other.counts[j])
                j += 1
            } else {
                mergedKeys.append(keys[i])
                mergedCounts.append(Int.saturatingSum(counts[i], other.counts[j]))
                i += 1
                j += 1
            }
        }
        keys = mergedKeys
        counts = mergedCounts
    }

    /// Nearest-rank percentile (`p` in 0...1) of the rounded values; nil when empty.
    public func percentile(_ p: Double) -> Double? {
        percentiles([p]).first ?? nil
    }

    /// Several nearest-rank percentiles from one walk of the buckets each.
    public func percentiles(_ ps: [Double]) -> [Double?] {
        let total = self.total
        guard total > 0 else { return ps.map { _ in nil } }
        return ps.map { p in
            let rank = Self.rank(p, of: total)
            var seen = 0
            for (key, n) in zip(keys, counts) {
                seen = Int.saturatingSum(seen, n)
                if seen >= rank { return Self.value(of: key) }
            }
            return Self.value(of: keys[keys.count - 1])
        }
    }

    /// The nearest rank of percentile `p` among `total` values, within 1...total whatever `p`
    /// and `total` are (the conversion of `p * total` cannot trap).
    static func rank(_ p: Double, of total: Int) -> Int {
        let wanted = (p * Double(total)).rounded(.up)
        guard let rank = Int(exactly: wanted) else { return wanted > 0 ? total : 1 }
        return min(max(rank, 1), total)
    }

    /// `value` rounded toward zero to the sketch's precision: what a percentile answers for it.
    public static func rounded(_ value: Double) -> Double { Self.value(of: ordinal(of: value)) }

    // The top 19 bits of a double (sign, 11 exponent bits, 7 mantissa bits), reordered so
    // that unsigned order is numeric order: positive values get the top bit set, negative
    // values have every bit flipped.
    private static let droppedBits = UInt64(52 - mantissaBits)
    private static let keptBits = UInt64(64) - droppedBits
    private static let signBit = UInt32(1) << (keptBits - 1)
    private static let keptMask = (UInt32(1) << keptBits) - 1

    static func ordinal(of value: Double) -> UInt32 {
        let top = UInt32(truncatingIfNeeded: value.bitPattern >> droppedBits)
        return top & signBit != 0 ? ~top & keptMask : top | signBit
    }

    static func value(of ordinal: UInt32) -> Double {
        let top = ordinal & signBit != 0 ? ordinal & ~signBit : ~ordinal & keptMask
        return Double(bitPattern: UInt64(top) << droppedBits)
    }
}

extension LatencySketch {
    /// The stored form: bucket count, then per bucket in key order the key's delta from the
    /// previous key and its count, as varints.
    package func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.varint(UInt64(keys.count))
        var previous: UInt32 = 0
        for (key, n) in zip(keys, counts) {
            w.varint(UInt64(key - previous))
            w.varint(UInt64(n))
            previous = key
        }
        return w.bytes
    }

    package init(decoding bytes: [UInt8]) throws {
        var r = ByteReader(bytes)
        let buckets = try r.varint()
        guard buckets <= UInt64(bytes.count) else { throw StoreError.corruptBlock("latency sketch bucket count out of range") }
        keys.reserveCapacity(Int(buckets))
        counts.reserveCapacity(Int(buckets))
        var key: UInt64 = 0
        for n in 0..<Int(buckets) {
            let delta = try r.varint()
            guard delta <= UInt64(Self.keptMask) else { throw StoreError.corruptBlock("latency sketch bucket out of range") }
            key += delta
            let count = try r.varint()
            // Keys strictly ascending (a zero delta after the first bucket would repeat one).
            guard key <= UInt64(Self.keptMask), n == 0 || delta > 0, count > 0, count <= UInt64(Int.max) else {
                throw StoreError.corruptBlock("latency sketch bucket out of range")
            }
            keys.append(UInt32(key))
            counts.append(Int(count))
        }
    }
}

extension LatencySketch {
    /// Each occupied bucket's ordinal and count, in value order.
    public func forEachBucket(_ body: (_ ordinal: UInt32, _ count: Int) -> Void) {
        for (key, n) in zip(keys, counts) { body(key, n) }
    }
}

/// Where a stats answer gathers durations: the buckets of a ``LatencySketch`` as one dense
/// run of counts from the lowest occupied ordinal to the highest, so merging an hour's
/// sketch into it adds each bucket in place (no allocation, no walk of the buckets already
/// there). A 30-day enrollment report merges thousands of hourly sketches into a few dozen
/// of these; merged as sketches, that merge was the largest cost of the answer. Percentiles
/// are those of the sketch with the same buckets, so answers do not change.
public struct LatencyAccumulator: Sendable {
    private var base: UInt32 = 0
    private var counts: [Int] = []
    public private(set) var total = 0

    public init() {}

    public mutating func add(_ value: Double) {
        guard value.isFinite else { return }
        add(ordinal: LatencySketch.ordinal(of: value), count: 1)
    }

    /// Adds a sketch's buckets; a bucket that stands for no finite value (only a damaged
    /// stored sketch can have one) is left out, as `add` leaves out such values.
    public mutating func merge(_ sketch: LatencySketch) {
        sketch.forEachBucket { ordinal, count in
            if LatencySketch.value(of: ordinal).isFinite { add(ordinal: ordinal, count: count) }
        }
    }

    public mutating func merge(_ other: LatencyAccumulator) {
        for (i, n) in other.counts.enumerated() where n > 0 { add(ordinal: other.base + UInt32(i), count: n) }
    }

    private mutating func add(ordinal: UInt32, count: Int) {
        if counts.isEmpty {
            base = ordinal
            counts = [count]
        } else if ordinal < base {
            counts.insert(contentsOf: repeatElement(0, count: Int(base - ordinal)), at: 0)
            base = ordinal
            counts[0] = Int.saturatingSum(counts[0], count)
        } else if Int(ordinal - base) >= counts.count {
            counts.append(contentsOf: repeatElement(0, count: Int(ordinal - base) - counts.count + 1))
            counts[counts.count - 1] = Int.saturatingSum(counts[counts.count - 1], count)
        } else {
            counts[Int(ordinal - base)] = Int.saturatingSum(counts[Int(ordinal - base)], count)
        }
        total = Int.saturatingSum(total, count)
    }

    /// Nearest-rank percentiles, as ``LatencySketch/percentiles(_:)`` answers them.
    public func percentiles(_ ps: [Double]) -> [Double?] {
        guard total > 0 else { return ps.map { _ in nil } }
        return ps.map { p in
            let rank = LatencySketch.rank(p, of: total)
            var seen = 0
            for (i, n) in counts.enumerated() {
                seen = Int.saturatingSum(seen, n)
                if seen >= rank { return LatencySketch.value(of: base + UInt32(i)) }
            }
            return LatencySketch.value(of: base + UInt32(counts.count - 1))
        }
    }
}

extension Int {
    /// `a + b`, or `Int.max` when that does not fit: counts read back from storage are summed
    /// with it, so a damaged count cannot trap a stats answer.
    @inline(__always) static func saturatingSum(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }
}
