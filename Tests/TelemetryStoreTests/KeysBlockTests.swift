import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// The keys block is what queries and stats read instead of the payload: it must give back
/// exactly what was written, and a damaged block must fail loudly rather than yield keys
/// that send records to the wrong filter or stats bucket.
@Suite struct KeysBlockTests {
    static let sample: [RecordKeys] = {
        var keys: [RecordKeys] = []
        for i in 0..<500 {
            var k = RecordKeys(
                time: 1_700_000_000_000 + Int64(i * 37) - (i % 3 == 0 ? 86_400_000 : 0), appId: "com.contoso.\(i % 4)",
                deviceId: i % 5 == 0 ? "" : "device-\(i % 11)", sessionId: "session-\(i / 50)",
                identity: i % 7 == 0 ? "jane@contoso.com" : "", name: i % 2 == 0 ? "EnrollmentCall" : "",
                detail: i % 9 == 0 ? "enroll" : "Ünïcödé ✓",
                statusCode: i % 4 == 0 ? nil : (i % 8 == 1 ? -(i * 1000) : i),
                durationMs: i % 6 == 0 ? nil : Double(i) / 3, succeeded: i % 3 == 0 ? nil : i % 2 == 0,
                level: i % 5 == 4 ? nil : LogLevel.allCases[i % LogLevel.allCases.count], incident: i % 13 == 0 ? "INC\(i)" : "")
            if i == 7 { k.time = .min + 1 }
            if i == 8 { k.time = .max - 1 }
            if i == 9 { k.durationMs = -0.0 }
            keys.append(k)
        }
        return keys
    }()

    @Test func roundTripGivesBackEveryField() throws {
        let decoded = try KeysBlock.decode(KeysBlock.encode(Self.sample))
        #expect(decoded == Self.sample)
        #expect(decoded[9].durationMs?.sign == .minus)
    }

    /// Decoded for one app (a filtered query or stats scan), that app's records are whole and
    /// every other record keeps what the filter and the page need (time, app, status, flags):
    /// for each app of the block, for an app it does not hold, and for generated blocks.
    @Test func aDecodeForOneAppKeepsThatAppsRecordsWhole() throws {
        var rng = SeededRandom(seed: PropertyScale.seed(0x4150_5053))
        var blocks = [Self.sample]
        for _ in 0..<PropertyScale.cases(40) {
            blocks.append(
                (0..<rng.below(300)).map { i in
                    RecordKeys(
                        time: Int64(rng.below(1_000_000)), appId: rng.pick(["a", "com.contoso.outlook", "com.contoso.teams", ""]),
                        deviceId: "device-\(rng.below(50))", sessionId: "s-\(i)", identity: rng.pick(["", "jane@contoso.com"]),
                        name: rng.pick(["AppLaunch", ""]), detail: "d\(rng.below(3))", statusCode: rng.below(2) == 0 ? nil : rng.below(600),
                        durationMs: rng.below(2) == 0 ? nil : Double(rng.below(1_000)), succeeded: rng.pick([nil, true, false]),
                        level: rng.pick([nil, .verbose, .error]), incident: rng.pick(["", "INC1"]))
                })
        }
        for keys in blocks {
            let bytes = KeysBlock.encode(keys)
            for app in Set(keys.map(\.appId)).union(["com.absent"]) {
                let decoded = try KeysBlock.decode(bytes, app: app)
                #expect(decoded.count == keys.count)
                for (got, written) in zip(decoded, keys) {
                    if written.appId == app {
                        #expect(got == written)
                    } else {
                        var kept = RecordKeys(time: written.time, appId: written.appId)
                        (kept.statusCode, kept.durationMs) = (written.statusCode, written.durationMs)
                        (kept.succeeded, kept.level) = (written.succeeded, written.level)
                        #expect(got == kept)
                    }
                }
            }
        }
    }

    /// Whatever keys a caller hands the store, encoding cannot trap: `Int.min`, whose zig-zag
    /// code + 1 does not fit, is kept as `Int.min + 1`; every other value and every double
    /// (infinities, NaN, 1e19) comes back as given, in a batch and in a compacted segment.
    @Test func extremeValuesAreStoredWithoutTrapping() throws {
        let codes: [Int?] = [.min, .min + 1, .max, -1, 0, nil]
        let durations: [Double?] = [.infinity, -.infinity, .nan, 1e19, -1, -0.0, .leastNonzeroMagnitude, nil]
        let keys = codes.enumerated().flatMap { i, code in
            durations.map { d in RecordKeys(time: Int64(i), appId: "a", statusCode: code, durationMs: d) }
        }
        let records = keys.enumerated().map { i, k in Segment.Record(id: Int64(i + 1), receivedAt: 0, keys: k, json: Array("{}".utf8)[...])
        }
        for decoded in [try KeysBlock.decode(KeysBlock.encode(keys)), try Segment.decodeKeys(Segment.encode(records).keys).keys] {
            #expect(decoded.map(\.statusCode) == keys.map { $0.statusCode == .min ? .min + 1 : $0.statusCode })
            #expect(zip(decoded, keys).allSatisfy { a, b in a.durationMs?.bitPattern == b.durationMs?.bitPattern })
        }
    }

    /// Generated keys whose strings collide under Swift's `==` but not as bytes (precomposed
    /// and decomposed accents, in every key column) come back byte for byte, in a batch and
    /// in a compacted segment: a string table keyed by `String` gave the second spelling the
    /// first one's bytes.
    @Test func canonicallyEquivalentSpellingsKeepTheirOwnBytes() throws {
        var rng = SeededRandom(seed: PropertyScale.seed(0x6e66_6364))
        let spellings = ["caf\u{E9}", "cafe\u{301}", "\u{C5}", "A\u{30A}", "\u{212B}", "x"]
        for _ in 0..<PropertyScale.cases(50) {
            let keys = (0..<1 + rng.below(40)).map { i in
                RecordKeys(
                    time: Int64(i), appId: rng.pick(spellings), deviceId: rng.pick(spellings), sessionId: rng.pick(spellings),
                    identity: rng.pick(spellings), name: rng.pick(spellings), detail: rng.pick(spellings), incident: rng.pick(spellings))
            }
            let records = keys.enumerated().map { i, k in
                Segment.Record(id: Int64(i + 1), receivedAt: 0, keys: k, json: Array("{}".utf8)[...])
            }
            func bytes(_ k: RecordKeys) -> [[UInt8]] {
                [k.appId, k.deviceId, k.sessionId, k.identity, k.name, k.detail, k.incident].map { Array($0.utf8) }
            }
            for decoded in [try KeysBlock.decode(KeysBlock.encode(keys)), try Segment.decodeKeys(Segment.encode(records).keys).keys] {
                #expect(decoded.map(bytes) == keys.map(bytes))
            }
        }
    }

    @Test func emptyBatchRoundTrips() throws {
        #expect(try KeysBlock.decode(KeysBlock.encode([])) == [])
    }

    @Test func repeatedValuesAreStoredOnce() {
        let many = Array(repeating: RecordKeys(time: 5, appId: "com.contoso.repeated-app-id", deviceId: "the-same-device"), count: 1_000)
        let bytes = KeysBlock.encode(many)
        let occurrences = bytes.indices.filter { bytes[$0...].starts(with: Array("the-same-device".utf8)) }.count
        #expect(occurrences == 1)
        // Each record costs its fixed 12 bytes (time delta, seven string references, status,
        // three flags); the strings themselves are paid once.
        #expect(bytes.count <= 1_000 * 12 + 64)
    }

    @Test func unknownVersionIsRejected() {
        var bytes = KeysBlock.encode(Self.sample)
        bytes[0] = KeysBlock.version + 1
        #expect(throws: StoreError.self) { try KeysBlock.decode(bytes) }
    }

    @Test func everyTruncationIsRejected() {
        let bytes = KeysBlock.encode(Array(Self.sample.prefix(20)))
        for length in 0..<bytes.count {
            #expect(throws: StoreError.self, "prefix of \(length) of \(bytes.count) bytes") {
                try KeysBlock.decode(Array(bytes.prefix(length)))
            }
            #expect(throws: StoreError.self, "prefix of \(length) of \(bytes.count) bytes, for one app") {
                try KeysBlock.decode(Array(bytes.prefix(length)), app: "com.contoso.1")
            }
        }
    }

    @Test func trailingBytesAreRejected() {
        let bytes = KeysBlock.encode(Array(Self.sample.prefix(3))) + [0]
        #expect(throws: StoreError.self) { try KeysBlock.decode(bytes) }
    }

    @Test func aStringIndexOutsideTheTableIsRejected() {
        // Version, one string ("a"), one record: time 0, then a reference to string 5.
        let bytes: [UInt8] = [KeysBlock.version, 1, 1, 0x61, 1, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        #expect(throws: StoreError.self) { try KeysBlock.decode(bytes) }
        // A record of another app than the one asked for is checked as fully.
        #expect(throws: StoreError.self) { try KeysBlock.decode(bytes, app: "b") }
    }

    @Test func outOfRangeFlagBytesAreRejected() throws {
        let one = [RecordKeys(time: 1, appId: "a", durationMs: nil, succeeded: nil, level: nil)]
        let good = KeysBlock.encode(one)
        #expect(try KeysBlock.decode(good) == one)
        // The last three bytes are the duration flag, success and level.
        for (offset, value) in [(3, UInt8(2)), (2, UInt8(3)), (1, UInt8(LogLevel.allCases.count + 1))] {
            var bad = good
            bad[bad.count - offset] = value
            #expect(throws: StoreError.self, "byte \(bad.count - offset) = \(value)") { try KeysBlock.decode(bad) }
        }
    }

    @Test func aHugeDeclaredCountIsRejectedWithoutAllocating() {
        var w = ByteWriter()
        w.bytes.append(KeysBlock.version)
        w.varint(UInt64(Int.max))
        #expect(throws: StoreError.self) { try KeysBlock.decode(w.bytes) }
        var w2 = ByteWriter()
        w2.bytes.append(KeysBlock.version)
        w2.varint(0)
        w2.varint(1 << 40)
        #expect(throws: StoreError.self) { try KeysBlock.decode(w2.bytes) }
    }
}
