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

    /// Count per bucket, keyed by ``ordinal(of:)`` so that key order is value order.
    public private(set) var counts: [UInt32: Int] = [:]

    public init() {}

    /// How many values the sketch holds.
    public var total: Int { counts.values.reduce(0, +) }

    public var isEmpty: Bool { counts.isEmpty }

    /// Counts `value`; infinities and NaN are not durations and are ignored.
    public mutating func add(_ value: Double, count: Int = 1) {
        guard value.isFinite, count > 0 else { return }
        counts[Self.ordinal(of: value), default: 0] += count
    }

    public mutating func merge(_ other: LatencySketch) {
        if counts.isEmpty {
            counts = other.counts
            return
        }
        for (key, n) in other.counts { counts[key, default: 0] += n }
    }

    /// Nearest-rank percentile (`p` in 0...1) of the rounded values; nil when empty.
    public func percentile(_ p: Double) -> Double? {
        percentiles([p]).first ?? nil
    }

    /// Several nearest-rank percentiles from one sort of the buckets.
    public func percentiles(_ ps: [Double]) -> [Double?] {
        let total = self.total
        guard total > 0 else { return ps.map { _ in nil } }
        let sorted = counts.sorted { $0.key < $1.key }
        return ps.map { p in
            let rank = min(max(Int((p * Double(total)).rounded(.up)), 1), total)
            var seen = 0
            for (key, n) in sorted {
                seen += n
                if seen >= rank { return Self.value(of: key) }
            }
            return Self.value(of: sorted[sorted.count - 1].key)
        }
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
    func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.varint(UInt64(counts.count))
        var previous: UInt32 = 0
        for (key, n) in counts.sorted(by: { $0.key < $1.key }) {
            w.varint(UInt64(key - previous))
            w.varint(UInt64(n))
            previous = key
        }
        return w.bytes
    }

    init(decoding bytes: [UInt8]) throws {
        var r = ByteReader(bytes)
        let buckets = Int(try r.varint())
        counts.reserveCapacity(buckets)
        var key: UInt64 = 0
        for _ in 0..<buckets {
            key += try r.varint()
            let n = try r.varint()
            guard key <= UInt64(Self.keptMask), n > 0, n <= UInt64(Int.max) else {
                throw StoreError.corruptBlock("latency sketch bucket out of range")
            }
            counts[UInt32(key), default: 0] += Int(n)
        }
    }
}
