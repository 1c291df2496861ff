import Compression
import Foundation
import StoreCore
import TelemetryModel

/// The records of one `batch` row, whichever format wrote it: a group-commit batch (ids
/// `firstSeq ..< firstSeq + count`, one receive time, zlib keys block and payload), a
/// compacted ``Segment`` (ids and receive times per record) or a ``GroupedSegment`` (a
/// segment per app). The one place that tells the formats apart, so every reader decodes
/// all of them, and always sees a row's records in id order.
///
/// A query for one app may decode only the groups that can hold it (`app:`); the block then
/// holds just their records (the others cannot match). Every reader that needs the whole
/// row (compaction, retention, rollups) decodes without it.
struct StoredBlock {
    /// Keys of the records held, in ascending id order.
    let keys: [RecordKeys]
    /// Per record, unless the row is a batch (contiguous ids, one receive time).
    private let ids: [Int64]?
    private let received: [Int64]?
    private let firstSeq: Int64
    private let rowReceivedAt: Int64
    private let parts: [Part]
    /// Per record, the part holding it and its line there; nil when one part holds every
    /// record in order.
    private let placement: [Placement]?

    private struct Part {
        /// The segment's decoded keys (GUID table); nil for a batch.
        var segment: Segment.Keys?
        /// Where the part's payload stream lies in the row's payload blob; nil: all of it.
        var payload: Range<Int>?
        var sizes: (coded: Int, text: Int)?
        var count: Int
    }

    fileprivate struct Placement {
        var part: Int32
        var line: Int32
    }

    /// Decodes a row's keys blob; `firstSeq` and `receivedAt` are the row's columns. With
    /// `app`, a grouped segment's groups of other apps are left out, and a batch's records of
    /// other apps keep only their time, app, status and flags (`KeysBlock.decode(_:app:)`):
    /// a caller that passes `app` filters by it before it reads anything else.
    init(keysBlob: [UInt8], firstSeq: Int64, receivedAt: Int64, app: String? = nil) throws {
        self.firstSeq = firstSeq
        rowReceivedAt = receivedAt
        switch keysBlob.first {
        case Segment.marker:
            let decoded = try Segment.decodeKeys(keysBlob)
            keys = decoded.keys
            ids = decoded.ids
            received = decoded.receivedAt
            parts = [Part(segment: decoded, payload: nil, sizes: nil, count: decoded.keys.count)]
            placement = nil
        case GroupedSegment.marker:
            // An app with a group of its own has every record of the row there; any other
            // app can only be in the mixed group.
            let layout = try GroupedSegment.layout(keysBlob)
            let all = layout.groups
            let groups =
                if let app { all.contains { $0.app == app } ? all.filter { $0.app == app } : all.filter { $0.app == nil } } else { all }
            let decoded = try groups.map { try GroupedSegment.keys(of: $0, in: keysBlob, layout: layout) }
            parts = zip(groups, decoded).map { g, d in
                Part(segment: d, payload: g.payload, sizes: (g.codedBytes, g.textBytes), count: g.count)
            }
            if decoded.count == 1 {
                keys = decoded[0].keys
                ids = decoded[0].ids
                received = decoded[0].receivedAt
                placement = nil
            } else {
                (keys, ids, received, placement) = Self.merge(decoded)
            }
        default:
            let decoded = try KeysBlock.decode(keysBlob.withUnsafeBytes { try Inflate.decompressStored($0) }, app: app)
            keys = decoded
            ids = nil
            received = nil
            parts = [Part(segment: nil, payload: nil, sizes: nil, count: decoded.count)]
            placement = nil
        }
    }

    /// Groups' records interleaved back into id order (each group's are ascending).
    private static func merge(_ groups: [Segment.Keys]) -> ([RecordKeys], [Int64]?, [Int64]?, [Placement]?) {
        let total = groups.reduce(0) { $0 + $1.keys.count }
        var keys: [RecordKeys] = []
        var ids: [Int64] = []
        var received: [Int64] = []
        var placement: [Placement] = []
        keys.reserveCapacity(total)
        ids.reserveCapacity(total)
        received.reserveCapacity(total)
        placement.reserveCapacity(total)
        var next = [Int](repeating: 0, count: groups.count)
        for _ in 0..<total {
            var pick = -1
            var lowest = Int64.max
            for g in groups.indices where next[g] < groups[g].ids.count && groups[g].ids[next[g]] < lowest {
                pick = g
                lowest = groups[g].ids[next[g]]
            }
            let line = next[pick]
            keys.append(groups[pick].keys[line])
            ids.append(lowest)
            received.append(groups[pick].receivedAt[line])
            placement.append(Placement(part: Int32(pick), line: Int32(line)))
            next[pick] += 1
        }
        return (keys, ids, received, placement)
    }

    /// Whether the row is a compacted segment of either format (not a group-commit batch).
    var isSegment: Bool { ids != nil }

    static func isSegment(_ keysBlob: [UInt8]) -> Bool {
        keysBlob.first == Segment.marker || keysBlob.first == GroupedSegment.marker
    }

    /// The id of record `i`.
    func id(_ i: Int) -> Int64 { ids?[i] ?? firstSeq + Int64(i) }

    /// When record `i` was received (a batch's records share their request's time).
    func receivedAt(_ i: Int) -> Int64 { received?[i] ?? rowReceivedAt }

    /// The lines of the records held, from the row's payload blob: only the parts held are
    /// inflated. `rawBytes` is the row's column of that name: a batch's inflated payload size, which
    /// lets it be inflated in one call into an array of that size.
    func lines(_ payloadBlob: Data, rawBytes: Int? = nil) throws -> Lines {
        try payloadBlob.withUnsafeBytes { (blob: UnsafeRawBufferPointer) throws -> Lines in
            var out: [BatchLines] = []
            out.reserveCapacity(parts.count)
            for part in parts {
                let text: [UInt8]
                if let segment = part.segment {
                    var stream = blob
                    if let range = part.payload {
                        guard range.upperBound <= blob.count else { throw StoreError.corruptBlock("segment group past the payload") }
                        stream = UnsafeRawBufferPointer(rebasing: blob[range])
                    }
                    text = try Segment.decodePayload(stream, keys: segment, sizes: part.sizes)
                } else if let rawBytes {
                    text = try Inflate.decompress(blob, format: .zlib, expectedSize: rawBytes)
                } else {
                    text = try Inflate.decompress(blob.bindMemory(to: UInt8.self), format: .zlib)
                }
                out.append(try BatchLines(payload: text, expected: part.count, firstSeq: firstSeq))
            }
            return Lines(parts: out, placement: placement)
        }
    }

    /// The lines of a block's records, by the block's record index.
    struct Lines {
        fileprivate let parts: [BatchLines]
        fileprivate let placement: [Placement]?

        /// The bytes of record `i` (without its newline), for the duration of `body`.
        func withLine<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            guard let placement else { return try parts[0].withLine(i, body) }
            let p = placement[i]
            return try parts[Int(p.part)].withLine(Int(p.line), body)
        }

        /// Bytes held (the inflated payloads).
        var byteCount: Int { parts.reduce(0) { $0 + $1.payload.count } }

        /// A copy of record `i`'s bytes.
        func line(_ i: Int) -> [UInt8] { withLine(i) { Array($0) } }

        /// Record `i`'s bytes as a slice of the inflated payload: no copy, and the payload
        /// stays alive as long as the slice does.
        func slice(_ i: Int) -> ArraySlice<UInt8> {
            guard let placement else { return parts[0].slice(i) }
            let p = placement[i]
            return parts[Int(p.part)].slice(Int(p.line))
        }
    }

    /// How much of a keys blob ``idSpan(keysBlob:firstSeq:count:)`` reads: the marker and two
    /// varints of at most ten bytes each.
    static let idSpanHeadBytes = 21

    /// The first and last id of a row, from its keys blob (or its first ``idSpanHeadBytes``)
    /// without inflating it.
    static func idSpan(keysBlob: [UInt8], firstSeq: Int64, count: Int64) throws -> ClosedRange<Int64> {
        guard isSegment(keysBlob) else { return firstSeq...(firstSeq + count - 1) }
        var r = ByteReader(keysBlob)
        _ = try r.byte()
        let first = Int64(bitPattern: try r.varint())
        let span = Int64(bitPattern: try r.varint())
        guard span >= 0 else { throw StoreError.corruptBlock("segment id span out of range") }
        return first...(first + span)
    }
}
