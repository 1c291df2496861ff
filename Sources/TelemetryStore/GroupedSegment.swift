import Compression
import StoreCore
import TelemetryModel

/// The compacted form of a row since segments are grouped by app: the row's records split
/// into one group per app that has many of them, plus one mixed group for the rest, each
/// with its own key columns and payload stream, coded like a ``Segment``.
///
/// Why: a support engineer's most common question names an app, and a fleet's segments hold
/// every app. Read as one stream, every segment of the window had to be inflated to return
/// the one record in six that matched; grouped, a query for one app inflates only that app's
/// group (or the mixed one, which may hold it), so its cost follows the matches, not the
/// window. Ids stay row-wide: the groups of a row interleave in id order, and a reader that
/// needs several groups merges them back into id order (``StoredBlock``), so cursors, pages
/// and every other reader see the row exactly as before.
///
/// The GUIDs are stored once for the whole row (a device's GUID recurs in every app group
/// it used; stored per group they cost a tenth more bytes): each group codes its text against
/// a table of its own, as a ``Segment`` does, and keeps only a map from that table to the
/// row's. Entries seen first in this group are "fresh" and take the row's next entries in
/// turn (map code 0, which zlib squeezes to nothing); entries an earlier group brought are
/// named by their index in the row's table (code index + 1).
///
/// Keys blob: the marker, varints first id and last id − first id (the same head as
/// ``Segment``, so the id span reads without inflating), the group count, the row's GUID
/// count and table (16 bytes each); per group its app (a byte 1 and the app's UTF-8, or a
/// byte 0 for the mixed group), record count, first id − the row's, first fresh entry, and
/// the lengths of its map, columns and payload streams, its coded payload size and NDJSON
/// size; then each group's deflated map and columns. Payload blob: the groups' payload
/// streams in group order.
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
        var firstId: Int64
        /// The row table's index of the group's first fresh GUID.
        var freshStart: Int
        var map: Range<Int>
        var columns: Range<Int>
        var payload: Range<Int>
        var codedBytes: Int
        var textBytes: Int
    }

    /// A keys blob's groups and where the row's GUID table lies in it (read entry by entry:
    /// a query for one app needs only its group's share of the table).
    struct Layout {
        var groups: [Group]
        var guidTable: Range<Int>

        var guidCount: Int { guidTable.count / 16 }
    }

    /// Groups `records` (ascending ids) by app and codes each group.
    static func encode(_ records: [Segment.Record]) throws -> Segment.Encoded {
        var perApp: [String: Int] = [:]
        for r in records { perApp[r.keys.appId, default: 0] += 1 }
        var writer = Writer(recordsPerApp: perApp)
        for r in records { try writer.append(id: r.id, receivedAt: r.receivedAt, keys: r.keys, json: r.json) }
        return try writer.finish()
    }

    /// The apps that get a group of their own, from how many records each has in the row:
    /// those with at least ``minGroupRecords``, the largest first, at most ``maxGroups`` (one
    /// fewer when other apps need the mixed group).
    static func ownGroups(recordsPerApp perApp: [String: Int]) -> Set<String> {
        Set(
            perApp.filter { $0.value >= minGroupRecords }.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .prefix(perApp.count > maxGroups ? maxGroups - 1 : maxGroups).map(\.key))
    }

    /// The groups a keys blob lists and the row's GUID table, with every range checked against
    /// the blob (keys) or laid end to end (payload; its length is checked when it is read).
    static func layout(_ keysBlob: [UInt8]) throws -> Layout {
        var r = ByteReader(keysBlob)
        guard try r.byte() == marker else { throw StoreError.corruptBlock("not a grouped segment") }
        let firstId = Int64(bitPattern: try r.varint())
        _ = try r.varint()
        let count = try r.varint()
        guard count >= 1, count <= UInt64(maxGroups) else { throw StoreError.corruptBlock("segment group count \(count) out of range") }
        let guidCount = try r.varint()
        guard guidCount <= UInt64((keysBlob.count - r.offset) / 16) else { throw StoreError.corruptBlock("GUID table larger than block") }
        let table = r.offset..<r.offset + Int(guidCount) * 16
        r.offset = table.upperBound
        var groups: [Group] = []
        var lengths: [(map: Int, columns: Int)] = []
        var payloadAt = 0
        let limit = UInt64(Int32.max)
        for _ in 0..<count {
            let app: String? =
                switch try r.byte() {
                case 0: nil
                case 1: try r.string()
                default: throw StoreError.corruptBlock("segment group tag out of range")
                }
            var v: [Int] = []
            for _ in 0..<8 {
                let x = try r.varint()
                guard x <= limit else { throw StoreError.corruptBlock("segment group sizes out of range") }
                v.append(Int(x))
            }
            guard v[0] >= 1, v[2] <= Int(guidCount) else { throw StoreError.corruptBlock("segment group out of range") }
            lengths.append((v[3], v[4]))
            groups.append(
                Group(
                    app: app, count: v[0], firstId: firstId + Int64(v[1]), freshStart: v[2], map: 0..<0, columns: 0..<0,
                    payload: payloadAt..<payloadAt + v[5], codedBytes: v[6], textBytes: v[7]))
            payloadAt += v[5]
        }
        var at = r.offset
        for i in groups.indices {
            groups[i].map = at..<at + lengths[i].map
            at += lengths[i].map
            groups[i].columns = at..<at + lengths[i].columns
            at += lengths[i].columns
        }
        guard at == keysBlob.count else { throw StoreError.corruptBlock("segment groups do not fill the keys blob") }
        return Layout(groups: groups, guidTable: table)
    }

    /// One group's keys, its GUID view rebuilt from its map over the row's table.
    static func keys(of group: Group, in keysBlob: [UInt8], layout: Layout) throws -> Segment.Keys {
        let map = try Inflate.decompress(Array(keysBlob[group.map]), format: .zlib)
        var r = ByteReader(map)
        let count = try r.varint()
        guard count <= UInt64(map.count) else { throw StoreError.corruptBlock("GUID map larger than block") }
        var local: [GuidTable.Guid] = []
        local.reserveCapacity(Int(count))
        var fresh = group.freshStart
        for _ in 0..<count {
            let entry = NextOrIndexCode.entry(try r.varint(), next: &fresh)
            guard entry < layout.guidCount else { throw StoreError.corruptBlock("GUID map entry past the table") }
            local.append(GuidTable.Guid(stored: keysBlob, at: layout.guidTable.lowerBound + entry * 16))
        }
        guard r.atEnd else { throw StoreError.corruptBlock("bytes after the GUID map") }
        let keys = try Segment.decodeColumns(
            deflated: Array(keysBlob[group.columns]), firstId: group.firstId, guids: GuidTable(guids: local))
        guard keys.keys.count == group.count else { throw StoreError.corruptBlock("segment group holds another count") }
        return keys
    }
}
