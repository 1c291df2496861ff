import Compression
import StoreCore
import TelemetryModel

/// The compacted form of a row of `batch`: the records of many adjacent small batches of one
/// kind, written by the ``Compactor``. Unlike a batch its ids need not be contiguous (the
/// other kind's records take ids in between), and each record keeps its own receive time.
///
/// Keys blob: a marker byte (a batch's keys blob is a zlib stream, whose first byte always
/// has 8 in its low nibble, so the first byte tells the formats apart), varints first id and
/// last id − first id (retention reads the id span without inflating), the ``GuidTable``,
/// then a zlib stream (preset dictionary ``SegmentDictionary/keys``) of columns: ids,
/// receive times, times, then each string field as a dictionary of its distinct values with
/// one code per record, then status codes, durations, outcomes and levels.
/// Payload blob: the NDJSON lines with GUIDs coded, zlib with ``SegmentDictionary/payload``.
enum Segment {
    static let marker: UInt8 = 0x01
    /// The payload's zlib level. Measured on GUID-coded fleet text in app groups (2,700
    /// records): level 9 took 3x the CPU of level 6 for a payload 13% smaller; level 8 gets
    /// most of that (11% smaller than 6) for 1.75x. The payload is about a third of a
    /// segment's bytes (the GUID table and columns are the rest).
    static let payloadLevel: Int32 = 8
    /// The key columns' and GUID maps' level: level 9 cost the compactor 18% more CPU than
    /// level 6 for 0.2% fewer bytes of segment.
    static let zlibLevel: Int32 = 6

    struct Record {
        var id: Int64
        var receivedAt: Int64
        var keys: RecordKeys
        var json: ArraySlice<UInt8>
    }

    /// A segment as written: its two blobs, the NDJSON bytes it stands for, and the size of
    /// the GUID-coded text its payload inflates to (recorded so a reader inflates it in one
    /// call into a buffer of the right size).
    struct Encoded {
        var keys: [UInt8]
        var payload: [UInt8]
        var rawBytes: Int
        var codedBytes: Int
    }

    /// The decoded keys blob: what queries filter on, without the payload.
    struct Keys {
        var ids: [Int64]
        var receivedAt: [Int64]
        var keys: [RecordKeys]
        var guids: GuidTable
    }

    /// A run of records coded against a GUID table of its own: its deflated columns and
    /// payload, with the table they refer to (its order is first appearance, payload first).
    struct Body {
        var guids: GuidTable
        var columns: [UInt8]
        var payload: [UInt8]
        var rawBytes: Int
        var codedBytes: Int
    }

    /// Encodes `records` (ascending ids) into a keys blob and a payload blob in this format
    /// (which the compactor no longer writes: ``GroupedSegment`` does; kept so stored rows of
    /// this format, and tests of them, can be made and read).
    static func encode(_ records: [Record]) throws -> Encoded {
        var writer = try BodyWriter(expectedRecords: records.count)
        for r in records { try writer.append(id: r.id, receivedAt: r.receivedAt, keys: r.keys, json: r.json) }
        let body = try writer.finish()
        var head = ByteWriter()
        head.bytes.append(marker)
        head.varint(UInt64(records[0].id))
        head.varint(UInt64(records[records.count - 1].id - records[0].id))
        let table = body.guids.stored
        head.varint(UInt64(table.count / 16))
        head.bytes.append(contentsOf: table)
        head.bytes.append(contentsOf: body.columns)
        return Encoded(keys: head.bytes, payload: body.payload, rawBytes: body.rawBytes, codedBytes: body.codedBytes)
    }

    static func decodeKeys(_ keysBlob: [UInt8]) throws -> Keys {
        var r = ByteReader(keysBlob)
        guard try r.byte() == marker else { throw StoreError.corruptBlock("not a segment") }
        let first = Int64(bitPattern: try r.varint())
        _ = try r.varint()
        let guidCount = try r.varint()
        guard guidCount <= UInt64(keysBlob.count / 16) else { throw StoreError.corruptBlock("GUID table larger than block") }
        let tableEnd = r.offset + Int(guidCount) * 16
        guard tableEnd <= keysBlob.count else { throw StoreError.corruptBlock("GUID table past the end of the block") }
        let guids = try GuidTable(stored: keysBlob[r.offset..<tableEnd])
        return try decodeColumns(deflated: Array(keysBlob[tableEnd...]), firstId: first, guids: guids)
    }

    /// A body's keys from its deflated columns, its first id and the GUID table it was coded
    /// against.
    static func decodeColumns(deflated: [UInt8], firstId: Int64, guids: GuidTable) throws -> Keys {
        let columns = try Inflate.decompress(deflated, format: .zlib, dictionary: SegmentDictionary.keys)
        var keys = try decodeColumns(columns, firstId: firstId, guids: guids)
        keys.guids = guids
        return keys
    }

    /// The NDJSON of a segment, given its decoded keys (for the GUID table). With `sizes`
    /// (recorded by a grouped segment) the payload is inflated in one call into a buffer of
    /// its coded size and decoded into one of its text size.
    static func decodePayload(_ payloadBlob: UnsafeRawBufferPointer, keys: Keys, sizes: (coded: Int, text: Int)? = nil) throws
        -> [UInt8]
    {
        let coded =
            if let sizes {
                try Inflate.decompress(payloadBlob, format: .zlib, dictionary: SegmentDictionary.payload, exactSize: sizes.coded)
            } else {
                try Inflate.decompress(payloadBlob.bindMemory(to: UInt8.self), format: .zlib, dictionary: SegmentDictionary.payload)
            }
        var guids = keys.guids
        var out: [UInt8] = []
        out.reserveCapacity(sizes?.text ?? coded.count * 2)
        try guids.decode(coded[...], into: &out, relative: true)
        return out
    }

    // MARK: Columns

    /// The string fields of ``RecordKeys`` in column order, for decoding.
    private static var stringFields: [WritableKeyPath<RecordKeys, String>] {
        [\.appId, \.deviceId, \.sessionId, \.identity, \.name, \.detail, \.incident]
    }

    private static func decodeColumns(_ bytes: [UInt8], firstId: Int64, guids: GuidTable) throws -> Keys {
        var r = ByteReader(bytes)
        let n = try r.varint()
        guard n <= UInt64(bytes.count) else { throw StoreError.corruptBlock("record count larger than block") }
        let count = Int(n)
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        var id = firstId
        for _ in 0..<count {
            id += Int64(bitPattern: try r.varint())
            ids.append(id)
        }
        var receivedAt: [Int64] = []
        receivedAt.reserveCapacity(count)
        var t: Int64 = 0
        for _ in 0..<count {
            t &+= KeysBlock.unzigzag(try r.varint())
            receivedAt.append(t)
        }
        var keys: [RecordKeys] = []
        keys.reserveCapacity(count)
        t = 0
        for _ in 0..<count {
            t &+= KeysBlock.unzigzag(try r.varint())
            keys.append(RecordKeys(time: t, appId: ""))
        }
        var table = guids
        var text: [UInt8] = []
        for field in stringFields {
            let valueCount = try r.varint()
            guard valueCount <= UInt64(bytes.count) else { throw StoreError.corruptBlock("dictionary larger than block") }
            var values: [String] = []
            values.reserveCapacity(Int(valueCount))
            for _ in 0..<valueCount {
                let length = try r.varint()
                guard length <= UInt64(bytes.count - r.offset) else { throw StoreError.corruptBlock("value past end") }
                text.removeAll(keepingCapacity: true)
                try table.decode(bytes[r.offset..<r.offset + Int(length)], into: &text, relative: false)
                r.offset += Int(length)
                values.append(String(decoding: text, as: UTF8.self))
            }
            var next = 0
            for i in 0..<count {
                let index = NextOrIndexCode.entry(try r.varint(), next: &next)
                guard index < values.count else { throw StoreError.corruptBlock("dictionary code out of range") }
                keys[i][keyPath: field] = values[index]
            }
        }
        for i in 0..<count { keys[i].statusCode = KeysBlock.statusCode(ofCode: try r.varint()) }
        for i in 0..<count {
            switch try r.byte() {
            case 0: break
            case 1: keys[i].durationMs = Double(try r.varint())
            case 2: keys[i].durationMs = Double(bitPattern: UInt64(bitPattern: try r.int64()))
            default: throw StoreError.corruptBlock("duration flag out of range")
            }
        }
        for i in 0..<count {
            switch try r.byte() {
            case 0: break
            case 1: keys[i].succeeded = false
            case 2: keys[i].succeeded = true
            default: throw StoreError.corruptBlock("success flag out of range")
            }
        }
        for i in 0..<count {
            let level = try r.byte()
            if level > 0 {
                guard let known = LogLevel(rawValue: Int(level) - 1) else { throw StoreError.corruptBlock("log level out of range") }
                keys[i].level = known
            }
        }
        guard r.atEnd else { throw StoreError.corruptBlock("bytes after the last column") }
        return Keys(ids: ids, receivedAt: receivedAt, keys: keys, guids: guids)
    }
}
