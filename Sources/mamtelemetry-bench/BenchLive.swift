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
    /// Where each `eventId` starts: its first eight characters number the send, in hex.
    private let eventIDs: [Int]

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
        var ids: [Int] = []
        template.withUnsafeBufferPointer { bytes in
            var i = 0
            while i < bytes.count {
                if Self.matches(Self.timeKey, bytes, at: i) {
                    let start = i + Self.timeKey.count
                    let value = UnsafeBufferPointer(rebasing: bytes[start..<min(start + Self.timeWidth, bytes.count)])
                    if let t = Timestamp.parse(bytes: value) { times.append((start, referenceMs - t)) }
                    i = start
                } else if Self.matches(Self.eventIDKey, bytes, at: i) {
                    ids.append(i + Self.eventIDKey.count)
                    i += Self.eventIDKey.count
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
    /// (which send of this template it is) from `nonce` (the run's), eight hex digits.
    func stamped(nowMs: Int64, round: Int, nonce: UInt64) -> [UInt8] {
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
            for at in eventIDs {
                for k in 0..<8 { bytes[at + k] = roundHex[k] }
            }
        }
        return out
    }
}
