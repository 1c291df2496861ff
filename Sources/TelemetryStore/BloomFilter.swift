import TelemetryModel

/// A per-batch Bloom filter over the batch's filterable values (apps, devices, sessions,
/// identities, names, status codes, incidents). A query for one device skips every batch
/// whose filter says "not here" without reading or inflating it; false positives only cost
/// a wasted scan. Cheaper to write than a term table (one blob per batch, not one row per
/// distinct value), which matters at ingest rates of tens of thousands of records a second.
struct BloomFilter {
    private(set) var bits: [UInt8]
    static let hashes = 7

    /// Sized for ~1% false positives at `expected` distinct terms.
    init(expected: Int) {
        let bitCount = max(64, Int((Double(max(expected, 1)) * 9.6).rounded(.up)))
        bits = [UInt8](repeating: 0, count: (bitCount + 7) / 8)
    }

    init(bytes: [UInt8]) { bits = bytes }

    mutating func insert(_ term: BloomTerm) { insert(hashes: term.hashes) }

    mutating func insert(hashes: (UInt64, UInt64)) {
        let m = UInt64(bits.count * 8)
        let (h1, h2) = hashes
        for i in 0..<UInt64(Self.hashes) {
            let bit = (h1 &+ i &* h2) % m
            bits[Int(bit / 8)] |= 1 << UInt8(bit % 8)
        }
    }

    func mightContain(_ term: BloomTerm) -> Bool {
        guard !bits.isEmpty else { return true }
        let m = UInt64(bits.count * 8)
        let (h1, h2) = term.hashes
        for i in 0..<UInt64(Self.hashes) {
            let bit = (h1 &+ i &* h2) % m
            if bits[Int(bit / 8)] & (1 << UInt8(bit % 8)) == 0 { return false }
        }
        return true
    }
}

/// Builds one batch's filter from its records' keys. The filter is sized by the number of
/// distinct terms, so terms are gathered first, as their hash pairs (what the filter uses of
/// a term): a set of two integers is cheaper to keep than one of tagged strings.
struct BloomBuilder {
    /// The distinct terms' hash pairs (FNV-1a, so already uniform: no second hashing).
    private var terms = WideKeyTable()

    mutating func add(_ keys: RecordKeys) {
        for term in BloomTerm.terms(of: keys) {
            let (h1, h2) = term.hashes
            terms.insert(high: h2, low: h1, value: 0)
        }
    }

    func filter() -> BloomFilter {
        var filter = BloomFilter(expected: terms.count)
        for t in terms.keys { filter.insert(hashes: (t.low, t.high)) }
        return filter
    }
}

/// A field/value pair as the Bloom filter sees it; the field tag keeps an app id from
/// matching a device id with the same text.
struct BloomTerm: Hashable {
    let field: UInt8
    let value: String

    static func app(_ v: String) -> BloomTerm { BloomTerm(field: 1, value: v) }
    static func device(_ v: String) -> BloomTerm { BloomTerm(field: 2, value: v) }
    static func session(_ v: String) -> BloomTerm { BloomTerm(field: 3, value: v) }
    static func identity(_ v: String) -> BloomTerm { BloomTerm(field: 4, value: v) }
    static func name(_ v: String) -> BloomTerm { BloomTerm(field: 5, value: v) }
    static func statusCode(_ v: Int) -> BloomTerm { BloomTerm(field: 6, value: String(v)) }
    static func incident(_ v: String) -> BloomTerm { BloomTerm(field: 7, value: v) }

    /// Two independent 64-bit FNV-1a hashes (different offsets) for double hashing;
    /// stable across processes, unlike Swift's seeded `Hasher`. The bytes are read from the
    /// string's contiguous UTF-8 buffer: iterating `utf8` cost three times the instructions
    /// per byte, on every term of every stored record.
    var hashes: (UInt64, UInt64) {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        let prime: UInt64 = 0x100_0000_01b3
        a = (a ^ UInt64(field)) &* prime
        b = (b ^ UInt64(field)) &* prime
        var value = value
        value.withUTF8 { bytes in
            for c in bytes {
                a = (a ^ UInt64(c)) &* prime
                b = (b ^ UInt64(c)) &* prime
                b = b ^ (b >> 29)
            }
        }
        return (a, b | 1)
    }

    /// Every term a record contributes to its batch's filter.
    static func terms(of k: RecordKeys) -> [BloomTerm] {
        var t: [BloomTerm] = [.app(k.appId)]
        if !k.deviceId.isEmpty { t.append(.device(k.deviceId)) }
        if !k.sessionId.isEmpty { t.append(.session(k.sessionId)) }
        if !k.identity.isEmpty { t.append(.identity(k.identity)) }
        if !k.name.isEmpty { t.append(.name(k.name)) }
        if let c = k.statusCode { t.append(.statusCode(c)) }
        if !k.incident.isEmpty { t.append(.incident(k.incident)) }
        return t
    }
}
