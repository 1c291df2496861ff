import Compression
import TelemetryModel

extension Segment {
    /// A ``Body`` coded record by record: each record's text is GUID-coded and handed to a
    /// streaming deflater as it arrives, and its keys go into their columns
    /// (``ColumnWriter``), so the writer holds the compressed payload, the column codes and
    /// at most ``flushBytes`` of coded text, never the body's whole text or every record's
    /// keys. The bytes equal those of deflating the whole coded text in one call.
    struct BodyWriter {
        private var guids = GuidTable()
        private var pending: [UInt8] = []
        private let payload: DeflateStream
        private let flushBytes: Int
        private var columns: ColumnWriter
        private var rawBytes = 0
        private var codedBytes = 0

        /// Coded text is passed to zlib in pieces of about `flushBytes`: few calls, little held.
        /// `expectedRecords` sizes the key columns once (grown by doubling they held up to
        /// twice their size).
        init(expectedRecords: Int = 0, flushBytes: Int = 16 << 10) throws {
            payload = try DeflateStream(level: payloadLevel, dictionary: SegmentDictionary.payload)
            self.flushBytes = flushBytes
            pending.reserveCapacity(min(flushBytes, 1 << 20) + 4096)
            columns = ColumnWriter(expectedRecords: expectedRecords)
        }

        var count: Int { columns.count }

        /// Adds the next record (ids ascending); `json` is its NDJSON line without the newline.
        mutating func append(id: Int64, receivedAt time: Int64, keys recordKeys: RecordKeys, json: ArraySlice<UInt8>) throws {
            if columns.count > 0 {
                pending.append(0x0A)
                rawBytes += 1
            }
            rawBytes += json.count
            guids.code(json, into: &pending, relative: true)
            columns.append(id: id, receivedAt: time, keys: recordKeys)
            if pending.count >= flushBytes { try flush() }
        }

        /// The body: the payload stream ended, then the key columns coded against the GUID
        /// table the payload built (columns add the GUIDs only they hold).
        mutating func finish() throws -> Body {
            precondition(columns.count > 0, "a segment holds at least one record")
            try flush()
            let coded = columns.finish(guids: &guids)
            return Body(
                guids: guids, columns: try Deflate.compress(coded, level: zlibLevel, dictionary: SegmentDictionary.keys),
                payload: try payload.finish(), rawBytes: rawBytes, codedBytes: codedBytes)
        }

        private mutating func flush() throws {
            try payload.append(pending)
            codedBytes += pending.count
            pending.removeAll(keepingCapacity: true)
        }
    }
}
