import StoreCore
import TelemetryModel

extension Segment {
    /// A body's key columns (see ``Segment``) coded as its records arrive, so a writer holds
    /// each column's codes and each string column's distinct values, not every record's
    /// ``RecordKeys``: the writer kept its own array of them (eight strings and the optionals
    /// each) beside the merge's decoded rows until the segment was finished.
    ///
    /// The bytes are those the columns had when they were coded from the whole run at the end:
    /// the string values are GUID-coded at ``finish(guids:)``, after the payload has built its
    /// GUID table.
    struct ColumnWriter {
        private(set) var count = 0
        private var previousId: Int64?
        private var previousReceivedAt: Int64 = 0
        private var previousTime: Int64 = 0
        private var ids = ByteWriter()
        private var receivedAt = ByteWriter()
        private var times = ByteWriter()
        private var strings = Array(repeating: StringColumn(), count: 7)
        private var statusCodes = ByteWriter()
        private var durations = ByteWriter()
        private var outcomes = ByteWriter()
        private var levels = ByteWriter()

        init(expectedRecords: Int = 0) {
            for column in [\Self.ids, \.receivedAt, \.times, \.statusCodes, \.outcomes, \.levels] {
                self[keyPath: column].bytes.reserveCapacity(expectedRecords * 2)
            }
        }

        /// Adds the next record (ids ascending).
        mutating func append(id: Int64, receivedAt time: Int64, keys: RecordKeys) {
            ids.varint(UInt64(id - (previousId ?? id)))
            previousId = id
            receivedAt.varint(KeysBlock.zigzag(time &- previousReceivedAt))
            previousReceivedAt = time
            times.varint(KeysBlock.zigzag(keys.time &- previousTime))
            previousTime = keys.time
            strings[0].add(keys.appId)
            strings[1].add(keys.deviceId)
            strings[2].add(keys.sessionId)
            strings[3].add(keys.identity)
            strings[4].add(keys.name)
            strings[5].add(keys.detail)
            strings[6].add(keys.incident)
            statusCodes.varint(KeysBlock.statusCodeCode(keys.statusCode))
            // Whole milliseconds (what SDKs send) as a varint; anything else as the raw double.
            if let d = keys.durationMs {
                if d >= 0, d < 1e15, d.rounded() == d, d.sign == .plus {
                    durations.bytes.append(1)
                    durations.varint(UInt64(d))
                } else {
                    durations.bytes.append(2)
                    durations.int64(Int64(bitPattern: d.bitPattern))
                }
            } else {
                durations.bytes.append(0)
            }
            outcomes.bytes.append(keys.succeeded.map { $0 ? 2 : 1 } ?? 0)
            levels.bytes.append(keys.level.map { UInt8($0.rawValue) + 1 } ?? 0)
            count += 1
        }

        /// The columns, uncompressed: the string values coded against `guids` (which gains
        /// the GUIDs only the columns hold).
        func finish(guids: inout GuidTable) -> [UInt8] {
            var w = ByteWriter()
            w.bytes.reserveCapacity(count * 24)
            w.varint(UInt64(count))
            w.bytes += ids.bytes
            w.bytes += receivedAt.bytes
            w.bytes += times.bytes
            for column in strings { column.write(into: &w, guids: &guids) }
            w.bytes += statusCodes.bytes
            w.bytes += durations.bytes
            w.bytes += outcomes.bytes
            w.bytes += levels.bytes
            return w.bytes
        }
    }

    /// One string field: its distinct values in order of first use, and a code per record:
    /// 0 for "the next new value" (most codes of a column of unique values, which zlib then
    /// squeezes to almost nothing), else 1 + the value's index.
    private struct StringColumn {
        private var seen: [ExactText: Int] = [:]
        private var values: [String] = []
        private var codes = ByteWriter()

        mutating func add(_ value: String) {
            let i = seen.indexInserting(ExactText(value), next: values.count)
            if i == values.count {
                values.append(value)
                codes.bytes.append(0)
            } else {
                codes.varint(UInt64(i + 1))
            }
        }

        func write(into w: inout ByteWriter, guids: inout GuidTable) {
            w.varint(UInt64(values.count))
            for value in values {
                var coded: [UInt8] = []
                guids.code(Array(value.utf8)[...], into: &coded, relative: false)
                w.varint(UInt64(coded.count))
                w.bytes.append(contentsOf: coded)
            }
            w.bytes.append(contentsOf: codes.bytes)
        }
    }
}
