import Compression
import StoreCore
import TelemetryModel

extension GroupedSegment {
    /// A grouped segment written record by record, so a merge holds one input row's text at
    /// a time rather than the whole run's: each record goes to its group's ``Segment/BodyWriter``,
    /// which deflates it as it comes. The groups are chosen before the first record, from the
    /// row's count of records per app (``ownGroups(recordsPerApp:)``); the blobs are what one
    /// zlib call per stream over the whole text would make, byte for byte.
    ///
    /// Held while writing: per group, zlib's state (about 256 KiB, at most ``maxGroups``
    /// groups), the compressed payload so far, the keys and a piece of coded text.
    struct Writer {
        private let own: Set<String>
        private let perApp: [String: Int]
        private let mixedCount: Int
        /// Each group's app (nil: the mixed group), in order of its first record.
        private var apps: [String?] = []
        private var position: [String?: Int] = [:]
        /// nil once finished, which lets its zlib state go.
        private var bodies: [Segment.BodyWriter?] = []
        private var groupFirstIds: [Int64] = []
        private var firstId: Int64?
        private var lastId: Int64 = 0
        private let flushBytes: Int

        /// `recordsPerApp`: how many of the records to come each app has.
        init(recordsPerApp: [String: Int], flushBytes: Int = 16 << 10) {
            own = GroupedSegment.ownGroups(recordsPerApp: recordsPerApp)
            perApp = recordsPerApp
            mixedCount = recordsPerApp.reduce(0) { $0 + $1.value } - own.reduce(0) { $0 + (recordsPerApp[$1] ?? 0) }
            self.flushBytes = flushBytes
        }

        /// Adds the next record of the row (ids ascending); its app must be counted in
        /// `recordsPerApp`.
        mutating func append(id: Int64, receivedAt: Int64, keys: RecordKeys, json: ArraySlice<UInt8>) throws {
            let app: String? = own.contains(keys.appId) ? keys.appId : nil
            let group: Int
            if let at = position[app] {
                group = at
            } else {
                group = apps.count
                position[app] = group
                apps.append(app)
                bodies.append(
                    try Segment.BodyWriter(expectedRecords: app.map { perApp[$0] ?? 0 } ?? mixedCount, flushBytes: flushBytes))
                groupFirstIds.append(id)
            }
            if firstId == nil { firstId = id }
            lastId = id
            try bodies[group]!.append(id: id, receivedAt: receivedAt, keys: keys, json: json)
        }

        /// The row's two blobs. The groups are finished one after the other, so only one
        /// group's key columns are coded at a time.
        mutating func finish() throws -> Segment.Encoded {
            guard let firstId else { preconditionFailure("a segment holds at least one record") }
            var shared = GuidTable()
            var groupHeads = ByteWriter()
            var streams: [UInt8] = []
            var payload: [UInt8] = []
            var rawBytes = apps.count - 1  // the line breaks between one group's records and the next's
            var codedBytes = 0
            for n in apps.indices {
                guard var writer = bodies[n].take() else { preconditionFailure("a group finished twice") }
                let count = writer.count
                let body = try writer.finish()
                let freshStart = shared.guids.count
                var map = ByteWriter()
                map.varint(UInt64(body.guids.guids.count))
                for guid in body.guids.guids { map.varint(shared.share(guid).map { UInt64($0 + 1) } ?? 0) }
                let mapBytes = try Deflate.compress(map.bytes, level: Segment.zlibLevel)
                if let app = apps[n] {
                    groupHeads.bytes.append(1)
                    groupHeads.string(app)
                } else {
                    groupHeads.bytes.append(0)
                }
                for v in [count, Int(groupFirstIds[n] - firstId), freshStart, mapBytes.count, body.columns.count, body.payload.count] {
                    groupHeads.varint(UInt64(v))
                }
                groupHeads.varint(UInt64(body.codedBytes))
                groupHeads.varint(UInt64(body.rawBytes))
                streams += mapBytes
                streams += body.columns
                payload += body.payload
                rawBytes += body.rawBytes
                codedBytes += body.codedBytes
            }
            var head = ByteWriter()
            head.bytes.append(marker)
            head.varint(UInt64(firstId))
            head.varint(UInt64(lastId - firstId))
            head.varint(UInt64(apps.count))
            head.varint(UInt64(shared.guids.count))
            head.bytes += shared.stored
            return Segment.Encoded(
                keys: head.bytes + groupHeads.bytes + streams, payload: payload, rawBytes: rawBytes, codedBytes: codedBytes)
        }
    }
}
