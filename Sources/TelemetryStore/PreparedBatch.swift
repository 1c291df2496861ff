import Compression
import TelemetryModel

/// One stored batch, encoded and compressed but not yet numbered: every column of its
/// `batch` row except `firstSeq` and `receivedAt`, which only the committer assigns.
/// Encoding (NDJSON payload, keys block, Bloom filter, two deflates) is most of what storing
/// a batch costs, so a request's own task encodes its records before they queue, while
/// other requests encode theirs on the other cores; the single writer then only dedupes,
/// inserts rows and fsyncs.
struct PreparedBatch: Sendable {
    var count: Int
    var minTime: Int64
    var maxTime: Int64
    /// Bit `level.rawValue` is set when a record of that log level is in the batch.
    var levelMask: Int
    /// Uncompressed payload bytes (the `rawBytes` column).
    var rawBytes: Int
    var bloom: [UInt8]
    /// The zlib-compressed keys block.
    var keys: [UInt8]
    /// The zlib-compressed NDJSON payload.
    var payload: [UInt8]

    var storedBytes: Int { keys.count + payload.count }

    /// Encodes `records` as one batch, in order. The one place a batch's bytes are
    /// compressed, so a change of stored format (a preset dictionary) is made here.
    static func encode(_ records: some Collection<DecodedRecord>, zlibLevel: Int32) throws -> PreparedBatch {
        var payload: [UInt8] = []
        payload.reserveCapacity(records.reduce(0) { $0 + $1.json.count + 1 })
        var keys: [RecordKeys] = []
        keys.reserveCapacity(records.count)
        var bloom = BloomBuilder()
        var minTime = Int64.max
        var maxTime = Int64.min
        var levelMask = 0
        for record in records {
            if !payload.isEmpty { payload.append(0x0A) }
            payload.append(contentsOf: record.json)
            keys.append(record.keys)
            bloom.add(record.keys)
            minTime = min(minTime, record.keys.time)
            maxTime = max(maxTime, record.keys.time)
            if let l = record.keys.level { levelMask |= 1 << l.rawValue }
        }
        return PreparedBatch(
            count: records.count, minTime: minTime, maxTime: maxTime, levelMask: levelMask, rawBytes: payload.count,
            bloom: bloom.filter().bits, keys: try Deflate.compress(KeysBlock.encode(keys), level: zlibLevel),
            payload: try Deflate.compress(payload, level: zlibLevel))
    }

    /// The batches of `records` laid out by app (``AppBatchLayout``): each run cut
    /// (``cuts(_:configuration:)``) and encoded, runs in order, so the batches hold the
    /// records in `layout.order`.
    static func encode(
        _ records: [DecodedRecord], layout: AppBatchLayout, configuration: StoreConfiguration
    ) throws -> [PreparedBatch] {
        var batches: [PreparedBatch] = []
        for run in layout.runs {
            // One run is arrival order (the layout of a one-app request): no copy.
            let runRecords = layout.runs.count == 1 ? records : layout.order[run].map { records[$0] }
            for range in cuts(runRecords, configuration: configuration) {
                batches.append(try encode(runRecords[range], zlibLevel: configuration.zlibLevel))
            }
        }
        return batches
    }

    /// Where a run of records is cut into batches: at `maxBatchRecords` records or before a
    /// record that would take the payload past `maxBatchBytes` (a batch holds at least one).
    static func cuts(_ records: [DecodedRecord], configuration: StoreConfiguration) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        while start < records.count {
            var end = start
            var bytes = 0
            while end < records.count, end - start < configuration.maxBatchRecords,
                bytes == 0 || bytes + records[end].json.count < configuration.maxBatchBytes
            {
                bytes += records[end].json.count + 1
                end += 1
            }
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }
}

/// What a group of one request carries to the committer when it was encoded ahead:
/// its batches (records in ``AppBatchLayout`` order) and, for events, its rollup delta, both
/// computed as if every record survives dedupe. The committer uses them only when none of the group's records turns
/// out to be a retry of a stored one; otherwise it encodes the survivors itself.
struct PreparedGroup: Sendable {
    /// The order the batches hold the group's records in; the writer numbers them by it.
    var layout: AppBatchLayout
    var batches: [PreparedBatch]
    var rollups: EventRollupDelta?
}

extension BatchCommitter.Group {
    /// The group with its batches encoded ahead, when it is large enough to fill batches
    /// of its own (`StoreConfiguration.minPreparedRecords`); smaller groups are left to the
    /// committer, which packs consecutive ones of a kind into shared batches so that many
    /// small requests still make batches that compress well.
    /// Every group gets its device sightings here, in the request's task, less the pairs
    /// `knownDevices` already holds this hour, so the writer only merges what is new.
    func prepared(_ configuration: StoreConfiguration, knownDevices: DeviceIndexCache? = nil) throws -> Self {
        var copy = self
        let sightings = DeviceSightings(records, receivedAt: receivedAt)
        copy.sightings = knownDevices.map { sightings.unknown(to: $0) } ?? sightings
        guard records.count >= configuration.minPreparedRecords else { return copy }
        let layout = AppBatchLayout(apps: records.map(\.keys.appId))
        let batches = try PreparedBatch.encode(records, layout: layout, configuration: configuration)
        var rollups: EventRollupDelta?
        if kind == .event {
            var delta = EventRollupDelta()
            for record in records { delta.add(record.keys, receivedAt: receivedAt) }
            rollups = delta
        }
        copy.prepared = PreparedGroup(layout: layout, batches: batches, rollups: rollups)
        return copy
    }
}
