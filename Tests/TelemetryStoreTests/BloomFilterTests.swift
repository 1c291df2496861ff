import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// The per-batch Bloom filter decides which batches a filtered query may skip unread, so a
/// false negative would silently hide stored records; false positives only cost a scan.
@Suite struct BloomFilterTests {
    static func devices(_ range: Range<Int>) -> [BloomTerm] { range.map { .device("device-\($0)") } }

    @Test(arguments: [1, 10, 1_000, 20_000])
    func everyInsertedTermIsFound(count: Int) {
        var filter = BloomFilter(expected: count)
        let terms = Self.devices(0..<count)
        for t in terms { filter.insert(t) }
        #expect(terms.allSatisfy { filter.mightContain($0) })
    }

    @Test func falsePositivesStayNearTheDesignedRate() {
        var filter = BloomFilter(expected: 5_000)
        for t in Self.devices(0..<5_000) { filter.insert(t) }
        let probes = Self.devices(1_000_000..<1_050_000)
        let falsePositives = probes.filter { filter.mightContain($0) }.count
        // Sized for ~1% at the expected count; allow sampling noise but not a broken hash.
        let rate = Double(falsePositives) / Double(probes.count)
        #expect(rate < 0.02, "false-positive rate \(rate)")
        #expect(falsePositives > 0, "a filter that never says 'maybe' for absent terms is not hashing into its bits")
    }

    @Test func theFieldTagKeepsEqualTextInDifferentFieldsApart() {
        var filter = BloomFilter(expected: 200)
        for i in 0..<200 { filter.insert(.app("value-\(i)")) }
        let crossField = (0..<200).filter { filter.mightContain(.device("value-\($0)")) }.count
        #expect(crossField < 10, "\(crossField) of 200 device probes matched app terms")
        #expect((0..<200).allSatisfy { filter.mightContain(.app("value-\($0)")) })
    }

    @Test func filterReadBackFromItsBytesAnswersTheSame() {
        var filter = BloomFilter(expected: 300)
        let present: [BloomTerm] =
            Self.devices(0..<100) + (0..<100).map { .statusCode(-$0) } + (0..<100).map { .identity("user\($0)@contoso.com") }
        for t in present { filter.insert(t) }
        let stored = BloomFilter(bytes: filter.bits)
        #expect(stored.bits == filter.bits)
        #expect(present.allSatisfy { stored.mightContain($0) })
        let absent = Self.devices(500_000..<505_000)
        #expect(absent.map { stored.mightContain($0) } == absent.map { filter.mightContain($0) })
    }

    @Test func hashesAreStableAcrossProcesses() {
        // Stored filters are read by later processes: a seeded hash would make every stored
        // batch look empty after a restart. These values are FNV-1a as written to disk.
        let (a, b) = BloomTerm.app("com.contoso.app").hashes
        let (a2, b2) = BloomTerm(field: 1, value: "com.contoso.app").hashes
        #expect(a == a2 && b == b2)
        #expect(b & 1 == 1, "the second hash must be odd so double hashing visits distinct bits")
        var filter = BloomFilter(expected: 1)
        filter.insert(.app("com.contoso.app"))
        #expect(filter.bits.count == 8)
        #expect(filter.bits.reduce(0) { $0 + $1.nonzeroBitCount } <= BloomFilter.hashes)
    }

    /// FNV-1a of field 1 and "com.contoso.app" (computed outside Swift).
    static let pinnedAppHash: UInt64 = 0x589a_e440_cfdd_62b1

    /// The hashes are part of the stored format: filters written by earlier builds are read
    /// with today's. Checked against the format's definition (both FNV-1a variants over the
    /// field byte and the value's UTF-8 bytes) on generated values of every shape.
    @Test func hashesFollowTheStoredDefinition() {
        func reference(_ field: UInt8, _ bytes: [UInt8]) -> (UInt64, UInt64) {
            let prime: UInt64 = 0x100_0000_01b3
            var a = (0xcbf2_9ce4_8422_2325 ^ UInt64(field)) &* prime
            var b = (0x8422_2325_cbf2_9ce4 ^ UInt64(field)) &* prime
            for c in bytes {
                a = (a ^ UInt64(c)) &* prime
                b = (b ^ UInt64(c)) &* prime
                b ^= b >> 29
            }
            return (a, b | 1)
        }
        var random = SeededRandom(seed: 0xF17)
        let pieces = ["", "a", "é", "e\u{301}", "\u{0}", "😀", "com.contoso.", "4F2B-91"]
        for _ in 0..<5_000 {
            let value = (0..<random.below(6)).map { _ in random.pick(pieces) }.joined()
            let term = BloomTerm(field: UInt8(1 + random.below(7)), value: value)
            let (a, b) = term.hashes
            let (ra, rb) = reference(term.field, Array(value.utf8))
            #expect(a == ra && b == rb, "\(Array(value.utf8))")
        }
        // One value pinned, so a change to the definition itself is caught too.
        #expect(BloomTerm.app("com.contoso.app").hashes == reference(1, Array("com.contoso.app".utf8)))
        #expect(reference(1, Array("com.contoso.app".utf8)).0 == Self.pinnedAppHash)
    }

    @Test func anEmptyOrMissingFilterNeverExcludesABatch() {
        // A batch whose filter is missing must be scanned, not skipped.
        let empty = BloomFilter(bytes: [])
        #expect(empty.mightContain(.device("anything")))
        #expect(empty.mightContain(.app("")))
    }

    @Test func recordTermsCoverEveryFilterableField() {
        let keys = RecordKeys(
            time: 1, appId: "com.a", deviceId: "d", sessionId: "s", identity: "i@x", name: "AppLaunch", statusCode: 42,
            incident: "INC1")
        let terms = Set(BloomTerm.terms(of: keys))
        #expect(
            terms == [.app("com.a"), .device("d"), .session("s"), .identity("i@x"), .name("AppLaunch"), .statusCode(42), .incident("INC1")])
        #expect(BloomTerm.terms(of: RecordKeys(time: 1, appId: "com.a")) == [.app("com.a")])
    }
}
