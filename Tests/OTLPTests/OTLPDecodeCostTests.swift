import Foundation
import OTLP
import SwiftProtobuf
import TelemetryModel
import Testing

@testable import OTLP

/// What decoding an OTLP request costs is counted before it is decoded: every value the
/// decoder will make is met by the walk (checked against the decoded message tree of
/// generated requests, protobuf and JSON), charged as it is met, and a request past
/// `maxValuesPerRequest` is refused before decoding, whatever its wire size.
@Suite struct OTLPDecodeCostTests {
    /// A random attribute value, nested up to `depth`.
    static func value(_ rng: inout Rng, depth: Int) -> Attr {
        switch rng.below(depth > 0 ? 9 : 6) {
        case 0: return .string(String(repeating: "x", count: rng.below(20)))
        case 1: return .int(Int64(rng.below(1000)) - 500)
        case 2: return .double(Double(rng.below(1000)) / 7)
        case 3: return .bool(rng.below(2) == 0)
        case 4: return .bytes(Array(repeating: 7, count: rng.below(8)))
        case 5: return .string("")
        case 6, 7: return .array((0..<rng.below(12)).map { _ in value(&rng, depth: depth - 1) })
        default: return .kvlist((0..<rng.below(6)).map { ("k\($0)", value(&rng, depth: depth - 1)) })
        }
    }

    static func generated(_ rng: inout Rng) -> PBRequest {
        let records = (0..<(1 + rng.below(20))).map { i in
            logRecord(
                body: rng.below(3) == 0 ? nil : value(&rng, depth: 3), severity: rng.below(24), timeNanos: UInt64(i) * 1_000,
                attributes: (0..<rng.below(8)).map { ("a\($0)", value(&rng, depth: 3)) })
        }
        return request(resourceLogs(mailResource, [("scope", records)]))
    }

    /// Messages below the request in the decoded tree: each one the decoder allocated.
    static func messages(_ r: PBRequest) -> Int {
        func any(_ v: PBAnyValue) -> Int {
            switch v.value {
            case .arrayValue(let a): 1 + a.values.reduce(0) { $0 + 1 + any($1) }
            case .kvlistValue(let l): 1 + l.values.reduce(0) { $0 + 1 + (($1.hasValue) ? 1 + any($1.value) : 0) }
            default: 0
            }
        }
        func kv(_ k: PBKeyValue) -> Int { 1 + (k.hasValue ? 1 + any(k.value) : 0) }
        var n = 0
        for rl in r.resourceLogs {
            n += 1 + (rl.hasResource ? 1 + rl.resource.attributes.reduce(0) { $0 + kv($1) } : 0)
            for sl in rl.scopeLogs {
                n += 1 + (sl.hasScope ? 1 + sl.scope.attributes.reduce(0) { $0 + kv($1) } : 0)
                for lr in sl.logRecords {
                    n += 1 + (lr.hasBody ? 1 + any(lr.body) : 0) + lr.attributes.reduce(0) { $0 + kv($1) }
                }
            }
        }
        return n
    }

    static func count(_ body: [UInt8], _ encoding: OTLPEncoding, limits: DecodeLimits = .default) throws -> (values: Int, charged: Int) {
        var charged = 0
        let values = try OTLPDecodeCost.charge(body, encoding: encoding, limits: limits) { charged += $0 }
        return (values, charged)
    }

    @Test func theWalkMeetsEveryMessageTheDecoderMakes() throws {
        var rng = Rng(seed: 0xC057)
        let runs = ProcessInfo.processInfo.environment["OTLP_COST_RUNS"].flatMap(Int.init) ?? 300
        for _ in 0..<runs {
            let r = Self.generated(&rng)
            let expected = Self.messages(r)
            for encoding in [OTLPEncoding.protobuf, .json] {
                let body = encoding == .protobuf ? try r.protobuf : Array(try r.jsonUTF8Data())
                let (values, charged) = try Self.count(body, encoding)
                #expect(values >= expected, "\(encoding): counted \(values), the decoder makes \(expected) messages")
                #expect(charged >= expected * OTLPDecodeCost.bytesPerValue)
                // Bounded too: no more than one value per byte of body.
                #expect(values <= body.count + 1)
            }
        }
    }

    /// The audit's body: records of 780 empty array values, 2 wire bytes each.
    static func emptyArrays(records: Int, values: Int) throws -> PBRequest {
        var any = PBAnyValue()
        any.arrayValue.values = Array(repeating: PBAnyValue(), count: values)
        var kv = PBKeyValue()
        kv.key = "payload"
        kv.value = any
        var record = logRecord(body: .string("hello"))
        record.attributes = [kv]
        return request(resourceLogs(mailResource, [("scope", Array(repeating: record, count: records))]))
    }

    @Test func aRequestPastTheCapIsRefusedBeforeDecodingWithTheLimitNamed() throws {
        let limits = DecodeLimits(maxValuesPerRequest: 50_000)
        let body = try Self.emptyArrays(records: 200, values: 780).protobuf
        var charged = 0
        #expect(throws: RequestLimitError.tooManyValues(limit: 50_000)) {
            try OTLPLogsDecoder(limits: limits).decode(body, encoding: .protobuf, receivedAt: 0) { charged += $0 }
        }
        // Charged as met, and no further than the cap.
        #expect(charged > 0 && charged <= (50_000 + 1) * (OTLPDecodeCost.bytesPerValue + 16))
        #expect(RequestLimitError.tooManyValues(limit: 50_000).message.contains("maxValuesPerRequest=50000"))
        // Under the cap the same shape decodes.
        let small = try Self.emptyArrays(records: 20, values: 780).protobuf
        #expect(try OTLPLogsDecoder(limits: limits).decode(small, encoding: .protobuf, receivedAt: 0).logs.count == 20)
    }

    /// A length whose varint runs past the end of its enclosing message (found by FuzzOTLP:
    /// the walk subtracted past the end and trapped, one request killing the daemon) ends
    /// the walk; the decoder then refuses the body as malformed.
    @Test func aLengthRunningPastItsMessageEndsTheWalk() throws {
        // resourceLogs of 2 bytes: a key, then a length varint that continues beyond them.
        let body: [UInt8] = [0x0a, 0x02, 0x0a, 0xff, 0xff, 0x01]
        var charged = 0
        _ = try? OTLPLogsDecoder(limits: DecodeLimits()).decode(body, encoding: .protobuf, receivedAt: 0) { charged += $0 }
        _ = try OTLPDecodeCost.charge(body, encoding: .protobuf, limits: DecodeLimits()) { charged += $0 }
        #expect(charged >= 0)
    }

    /// A charge that refuses (the in-flight budget is spent) stops the request before decoding.
    @Test func aRefusedChargeStopsTheDecode() throws {
        struct Spent: Error {}
        let body = try Self.emptyArrays(records: 100, values: 100).protobuf
        var total = 0
        #expect(throws: Spent.self) {
            try OTLPLogsDecoder().decode(body, encoding: .protobuf, receivedAt: 0) { bytes in
                total += bytes
                if total > 256 << 10 { throw Spent() }
            }
        }
    }

    /// Bodies the walk cannot follow are left to the decoder's own refusal.
    @Test func malformedBodiesAreLeftToTheDecoder() throws {
        var rng = Rng(seed: 7)
        let good = try Self.generated(&rng).protobuf
        for cut in stride(from: 1, to: good.count, by: max(1, good.count / 40)) {
            var bytes = Array(good.prefix(cut))
            bytes.append(0xFF)
            _ = try? Self.count(bytes, .protobuf)
            _ = try? Self.count(Array(bytes.reversed()), .json)
        }
    }
}

/// SplitMix64 (this target does not link TestSupport).
struct Rng {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
