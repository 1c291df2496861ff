import Compression
import TelemetryModel

extension Segment {
    /// A ``Body`` coded record by record: each record's text is GUID-coded and handed to a
    /// streaming deflater as it arrives, so the writer holds the compressed payload, the keys
    /// and at most ``flushBytes`` of coded text, never the body's whole text. The bytes equal
    /// those of deflating the whole coded text in one call.
    struct BodyWriter {
        private var guids = GuidTable()
        private var pending: [UInt8] = []
        private let payload: DeflateStream
        private let flushBytes: Int
        private var ids: [Int64] = []
        private var receivedAt: [Int64] = []
        private var keys: [RecordKeys] = []
        private var rawBytes = 0
        private var codedBytes = 0

        /// Coded text is passed to zlib in pieces of about `flushBytes`: few calls, little held.
        /// `expectedRecords` sizes the key columns once (grown by doubling they held up to
        /// twice their size).
        init(expectedRecords: Int = 0, flushBytes: Int = 16 << 10) throws {
            payload = try DeflateStream(level: payloadLevel, dictionary: SegmentDictionary.payload)
            self.flushBytes = flushBytes
            pending.reserveCapacity(min(flushBytes, 1 << 20) + 4096)
            ids.reserveCapacity(expectedRecords)
            receivedAt.reserveCapacity(expectedRecords)
            keys.reserveCapacity(expectedRecords)
        }

        var count: Int { ids.count }

        /// Adds the next record (ids ascending); `json` is its NDJSON line without the newline.
        mutating func append(id: Int64, receivedAt time: Int64, keys recordKeys: RecordKeys, json: ArraySlice<UInt8>) throws {
            if !ids.isEmpty {
                pending.append(0x0A)
                rawBytes += 1
            }
            rawBytes += json.count
            guids.code(json, into: &pending, relative: true)
            ids.append(id)
            receivedAt.append(time)
            keys.append(recordKeys)
            if pending.count >= flushBytes { try flush() }
        }

        /// The body: the payload stream ended, then the key columns coded against the GUID
        /// table the payload built (columns add the GUIDs only they hold).
        mutating func finish() throws -> Body {
            precondition(!ids.isEmpty, "a segment holds at least one record")
            try flush()
            let columns = Segment.encodeColumns(ids: ids, receivedAt: receivedAt, keys: keys, guids: &guids)
            return Body(
                guids: guids, columns: try Deflate.compress(columns, level: zlibLevel, dictionary: SegmentDictionary.keys),
                payload: try payload.finish(), rawBytes: rawBytes, codedBytes: codedBytes)
        }

        private mutating func flush() throws {
            try payload.append(pending)
            codedBytes += pending.count
            pending.removeAll(keepingCapacity: true)
        }
    }
}
