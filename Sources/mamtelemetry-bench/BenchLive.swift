import ArgumentParser
import Foundation
import NIOCore
import TelemetryModel

/// A body sent again and again with fresh records (`bench --live`): at each send every record
/// gets the current time (minus how long before the pool was built it happened, so a body
/// still spans its ten minutes) and every event a new `eventId`, so however long the load runs
/// the daemon sees no duplicate and its store keeps growing, as under a fleet's real traffic.
/// Only the bytes of those two fields are rewritten in a copy of the template.
struct LiveBody: Sendable {
    let path: String
    let template: [UInt8]
    let records: Int
    /// Where each record's `time` value starts, and how long before the reference instant it was.
    private let times: [(at: Int, ageMs: Int64)]
    /// Where each `eventId` value starts and ends (the index of its closing quote): its first
    /// eight characters number the send, in hex.
    private let eventIDs: [(start: Int, end: Int)]

    static let timeKey = Array("\"time\":\"".utf8)
    static let eventIDKey = Array("\"eventId\":\"".utf8)
    /// `2026-11-25T10:00:00.123Z`: the generator writes every time in this width.
    static let timeWidth = 24

    /// `body` must be identity-encoded NDJSON whose events' ids start with eight hex digits;
    /// `referenceMs` is the instant its record times are relative to.
    init(_ body: BenchBody, referenceMs: Int64) {
        path = body.path
        records = body.records
        template = Array(body.wire.readableBytesView)
        var times: [(Int, Int64)] = []
        var ids: [(Int, Int)] = []
        template.withUnsafeBufferPointer { bytes in
            var i = 0
            while i < bytes.count {
                if Self.matches(Self.timeKey, bytes, at: i) {
                    let start = i + Self.timeKey.count
                    let value = UnsafeBufferPointer(rebasing: bytes[start..<min(start + Self.timeWidth, bytes.count)])
                    if let t = Timestamp.parse(bytes: value) { times.append((start, referenceMs - t)) }
                    i = start
                } else if Self.matches(Self.eventIDKey, bytes, at: i) {
                    let start = i + Self.eventIDKey.count
                    var end = start
                    while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
                    ids.append((start, end))
                    i = end
                } else {
                    i += 1
                }
            }
        }
        self.times = times
        eventIDs = ids
    }

    private static func matches(_ key: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        guard i + key.count <= bytes.count, bytes[i] == key[0] else { return false }
        for k in 1..<key.count where bytes[i + k] != key[k] { return false }
        return true
    }

    /// The body for one send: records timed relative to `nowMs`, events numbered by `round`
    /// (which send of this template it is) from `nonce` (the run's), eight hex digits; or,
    /// with `ids: .random`, every event given a fresh random GUID as its `eventId`.
    func stamped(nowMs: Int64, round: Int, nonce: UInt64, ids: LiveEventIDs = .numbered) -> [UInt8] {
        let out = stampedNumbered(nowMs: nowMs, round: round, nonce: nonce)
        guard ids == .random else { return out }
        // Spliced rather than rewritten in place: a GUID is longer than the template's ids.
        // One system draw per send seeds the rest (the generator must not cost the daemon its CPU).
        var random = SplitMix64(seed: UInt64.random(in: .min ... .max))
        var spliced: [UInt8] = []
        spliced.reserveCapacity(out.count + eventIDs.count * 24)
        var from = 0
        for id in eventIDs {
            spliced += out[from..<id.start]
            spliced += LiveEventIDs.guid(random.next(), random.next())
            from = id.end
        }
        spliced += out[from...]
        return spliced
    }

    private func stampedNumbered(nowMs: Int64, round: Int, nonce: UInt64) -> [UInt8] {
        var out = template
        let field = 0x8000_0000 | (UInt32(truncatingIfNeeded: nonce &+ UInt64(round)) & 0x7FFF_FFFF)
        let roundHex = Array(String(field, radix: 16).utf8)
        out.withUnsafeMutableBufferPointer { bytes in
            for (at, age) in times {
                let text = Timestamp.format(milliseconds: nowMs - age).utf8
                guard text.count == Self.timeWidth else { continue }
                var k = at
                for c in text {
                    bytes[k] = c
                    k += 1
                }
            }
            for id in eventIDs {
                for k in 0..<8 { bytes[id.start + k] = roundHex[k] }
            }
        }
        return out
    }
}

/// How `--live` names each send's events. Numbered ids (the send's number, then the record's)
/// arrive in order, so the store's retry-id index grows at its end; the SDK sends random
/// GUIDs, which land anywhere in it: the shape to soak with when what the store writes
/// matters.
enum LiveEventIDs: String, ExpressibleByArgument, CaseIterable, Sendable {
    case numbered, random

    /// A version-4 GUID in lower-case hex, from 128 random bits.
    static func guid(_ high: UInt64, _ low: UInt64) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for n in 0..<32 {
            if n == 8 || n == 12 || n == 16 || n == 20 { out.append(UInt8(ascii: "-")) }
            let word = n < 16 ? high : low
            var nibble = Int((word >> UInt64(60 - (n % 16) * 4)) & 0xF)
            if n == 12 { nibble = 4 }  // the version
            if n == 16 { nibble = 8 | (nibble & 3) }  // the variant
            out.append(digits[nibble])
        }
        return out
    }
}
