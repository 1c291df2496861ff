import Compression
import TelemetryModel

/// The records of one `batch` row, whichever format wrote it: a group-commit batch (ids
/// `firstSeq ..< firstSeq + count`, one receive time, zlib keys block and payload) or a
/// compacted ``Segment`` (ids and receive times per record). The one place that tells the
/// formats apart, so every reader decodes both.
struct StoredBlock {
    let keys: [RecordKeys]
    private let segment: Segment.Keys?
    private let firstSeq: Int64
    private let rowReceivedAt: Int64

    /// Decodes a row's keys blob; `firstSeq` and `receivedAt` are the row's columns.
    init(keysBlob: [UInt8], firstSeq: Int64, receivedAt: Int64) throws {
        self.firstSeq = firstSeq
        rowReceivedAt = receivedAt
        if Segment.isSegment(keysBlob) {
            let decoded = try Segment.decodeKeys(keysBlob)
            segment = decoded
            keys = decoded.keys
        } else {
            segment = nil
            keys = try KeysBlock.decode(Inflate.decompress(keysBlob, format: .zlib))
        }
    }

    var isSegment: Bool { segment != nil }

    /// The id of record `i`.
    func id(_ i: Int) -> Int64 { segment?.ids[i] ?? firstSeq + Int64(i) }

    /// When record `i` was received (a batch's records share their request's time).
    func receivedAt(_ i: Int) -> Int64 { segment?.receivedAt[i] ?? rowReceivedAt }

    /// The row's NDJSON (one line per record, in id order) from its payload blob.
    func payload(_ payloadBlob: [UInt8]) throws -> [UInt8] {
        if let segment { return try Segment.decodePayload(payloadBlob, keys: segment) }
        return try Inflate.decompress(payloadBlob, format: .zlib)
    }

    /// The first and last id of a row, from its keys blob without inflating it.
    static func idSpan(keysBlob: [UInt8], firstSeq: Int64, count: Int64) throws -> ClosedRange<Int64> {
        Segment.isSegment(keysBlob) ? try Segment.idSpan(keysBlob) : firstSeq...(firstSeq + count - 1)
    }
}
