import TelemetryModel

/// The compacted form of a row since segments are grouped by app: the row's records split
/// into one ``Segment`` per app that has many of them, plus one mixed ``Segment`` for the
/// rest, each with its own keys columns, GUID table and payload stream.
///
/// Why: a support engineer's most common question names an app, and a fleet's segments hold
/// every app. Read as one stream, every segment of the window had to be inflated to return
/// the one record in six that matched; grouped, a query for one app inflates only that app's
/// group (and the mixed one, which may hold it), so its cost follows the matches, not the
/// window. Ids stay row-wide: the groups of a row interleave in id order, and a reader that
/// needs several groups merges them back into id order (``StoredBlock``), so cursors, pages
/// and every other reader see the row exactly as before.
///
/// Keys blob: the marker, varints first id and last id − first id (the same head as
/// ``Segment``, so the id span reads without inflating), the group count, then per group its
/// app (a byte 1 and the app's UTF-8, or a byte 0 for the mixed group), record count, keys
/// length, payload length, coded payload size and NDJSON size; then the groups' ``Segment``
/// keys blobs in group order. Payload blob: the groups' payload streams in group order.
enum GroupedSegment {
    static let marker: UInt8 = 0x02
    /// At most this many groups per row: beyond it the smaller apps share the mixed group.
    static let maxGroups = 32
    /// An app with fewer records than this in a row goes to the mixed group: a group of a few
    /// records costs its own zlib streams and GUID table for little saved reading.
    static let minGroupRecords = 128

    /// One group's place in the row's blobs.
    struct Group: Sendable, Hashable {
        /// The app every record of the group has; nil for the mixed group.
        var app: String?
        var count: Int
        var keys: Range<Int>
        var payload: Range<Int>
        var codedBytes: Int
        var textBytes: Int
    }

    /// Groups `records` (ascending ids) by app and encodes each group as a ``Segment``.
    static func encode(_ records: [Segment.Record]) throws -> Segment.Encoded {
        precondition(!records.isEmpty, "a segment holds at least one record")
        var perApp: [String: Int] = [:]
        for r in records { perApp[r.keys.appId, default: 0] += 1 }
        let own = Set(
            perApp.filter { $0.value >= minGroupRecords }.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .prefix(perApp.count > maxGroups ? maxGroups - 1 : maxGroups).map(\.key))
        // Groups in order of their first record, the mixed one where its first record falls.
        var order: [String?] = []
        var members: [String?: [Segment.Record]] = [:]
        for r in records {
            let group: String? = own.contains(r.keys.appId) ? r.keys.appId : nil
            if members[group] == nil {
                order.append(group)
                members[group] = []
            }
            members[group]!.append(r)
        }
        var head = ByteWriter()
        head.bytes.append(marker)
        head.varint(UInt64(records[0].id))
        head.varint(UInt64(records[records.count - 1].id - records[0].id))
        head.varint(UInt64(order.count))
        var keys: [UInt8] = []
        var payload: [UInt8] = []
        var rawBytes = order.count - 1  // the line breaks between groups' last and next records
        var codedBytes = 0
        for group in order {
            let part = try Segment.encode(members[group]!)
            if let app = group {
                head.bytes.append(1)
                head.string(app)
            } else {
                head.bytes.append(0)
            }
            head.varint(UInt64(members[group]!.count))
            head.varint(UInt64(part.keys.count))
            head.varint(UInt64(part.payload.count))
            head.varint(UInt64(part.codedBytes))
            head.varint(UInt64(part.rawBytes))
            keys += part.keys
            payload += part.payload
            rawBytes += part.rawBytes
            codedBytes += part.codedBytes
        }
        return Segment.Encoded(keys: head.bytes + keys, payload: payload, rawBytes: rawBytes, codedBytes: codedBytes)
    }

    /// The groups a keys blob lists, with their ranges checked against the blob (keys) and
    /// laid end to end (payload; the payload blob's length is checked when it is read).
    static func groups(_ keysBlob: [UInt8]) throws -> [Group] {
        var r = ByteReader(keysBlob)
        guard try r.byte() == marker else { throw StoreError.corruptBlock("not a grouped segment") }
        _ = try r.varint()
        _ = try r.varint()
        let count = try r.varint()
        guard count >= 1, count <= UInt64(maxGroups) else { throw StoreError.corruptBlock("segment group count \(count) out of range") }
        var groups: [Group] = []
        var keysLengths: [Int] = []
        var payloadAt = 0
        for _ in 0..<count {
            let app: String? =
                switch try r.byte() {
                case 0: nil
                case 1: try r.string()
                default: throw StoreError.corruptBlock("segment group tag out of range")
                }
            let records = try r.varint()
            let keysLength = try r.varint()
            let payloadLength = try r.varint()
            let coded = try r.varint()
            let text = try r.varint()
            let limit = UInt64(Int32.max)
            guard records >= 1, keysLength <= limit, payloadLength <= limit, coded <= limit, text <= limit else {
                throw StoreError.corruptBlock("segment group sizes out of range")
            }
            keysLengths.append(Int(keysLength))
            groups.append(
                Group(
                    app: app, count: Int(records), keys: 0..<0, payload: payloadAt..<payloadAt + Int(payloadLength),
                    codedBytes: Int(coded), textBytes: Int(text)))
            payloadAt += Int(payloadLength)
        }
        var keysAt = r.offset
        for i in groups.indices {
            groups[i].keys = keysAt..<keysAt + keysLengths[i]
            keysAt += keysLengths[i]
        }
        guard keysAt == keysBlob.count else { throw StoreError.corruptBlock("segment groups do not fill the keys blob") }
        return groups
    }
}
