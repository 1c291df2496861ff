public import Foundation
import GRDB
import StoreCore
public import TelemetryModel

/// What an embedded store holds, read from its files without a daemon (`mamtelemetryd
/// --store-layout`): per environment, the file's pages, and per record kind the records,
/// stored rows, how many of them are merged segments and what their columns weigh. The
/// benchmarks and the soak read their figures here, so what a segment looks like on disk
/// is known in this target only.
public struct StoreLayout: Sendable, Codable, Equatable {
    public var environments: [EnvironmentLayout]

    public struct EnvironmentLayout: Sendable, Codable, Equatable {
        public var environment: TelemetryEnvironment
        /// Every file of the environment's directory (database, WAL, shared memory).
        public var fileBytes: Int64
        public var pageSize: Int64
        public var pages: Int64
        /// Pages on the free list: in the file, holding nothing.
        public var freePages: Int64
        /// Bytes of the pages that hold data: what the size cap is compared with.
        public var usedBytes: Int64
        public var kinds: [KindLayout]
    }

    public struct KindLayout: Sendable, Codable, Equatable {
        public var kind: RecordKind
        public var records: Int64
        /// Stored rows: batches as committed, and segments the compactor merged them into.
        public var rows: Int64
        public var segments: Int64
        /// Rows the compactor has not merged (yet): the newest run may stay one until more follows.
        public var uncompacted: Int64 { rows - segments }
        /// The records' NDJSON as received, before compression.
        public var rawBytes: Int64
        public var keysBytes: Int64
        /// Of ``keysBytes``, the segments' GUID tables: each distinct GUID of a segment in 16
        /// bytes, stored once for both its payload text and its key columns (the payload cannot
        /// be read without it), so these are the payload's GUIDs as much as the keys'.
        public var guidTableBytes: Int64
        public var payloadBytes: Int64
        public var bloomBytes: Int64
        /// Bytes of the rows' stored columns (keys block and payload; the Bloom filter aside).
        public var storedBytes: Int64

        public init(kind: RecordKind) {
            self.kind = kind
            (records, rows, segments, rawBytes, keysBytes, guidTableBytes, payloadBytes, bloomBytes, storedBytes) = (
                0, 0, 0, 0, 0, 0, 0, 0, 0
            )
        }

        private enum CodingKeys: String, CodingKey {
            case kind, records, rows, segments, uncompacted, rawBytes, keysBytes, guidTableBytes, payloadBytes, bloomBytes, storedBytes
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(kind: try c.decode(RecordKind.self, forKey: .kind))
            records = try c.decode(Int64.self, forKey: .records)
            rows = try c.decode(Int64.self, forKey: .rows)
            segments = try c.decode(Int64.self, forKey: .segments)
            rawBytes = try c.decode(Int64.self, forKey: .rawBytes)
            keysBytes = try c.decode(Int64.self, forKey: .keysBytes)
            guidTableBytes = try c.decode(Int64.self, forKey: .guidTableBytes)
            payloadBytes = try c.decode(Int64.self, forKey: .payloadBytes)
            bloomBytes = try c.decode(Int64.self, forKey: .bloomBytes)
            storedBytes = try c.decode(Int64.self, forKey: .storedBytes)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(kind, forKey: .kind)
            try c.encode(records, forKey: .records)
            try c.encode(rows, forKey: .rows)
            try c.encode(segments, forKey: .segments)
            try c.encode(uncompacted, forKey: .uncompacted)
            try c.encode(rawBytes, forKey: .rawBytes)
            try c.encode(keysBytes, forKey: .keysBytes)
            try c.encode(guidTableBytes, forKey: .guidTableBytes)
            try c.encode(payloadBytes, forKey: .payloadBytes)
            try c.encode(bloomBytes, forKey: .bloomBytes)
            try c.encode(storedBytes, forKey: .storedBytes)
        }
    }

    /// Reads the layout of every environment under `dataDirectory` that has a database;
    /// read-only, so it may run beside the daemon that writes them (it sees their last commit).
    public static func read(dataDirectory: URL) throws -> StoreLayout {
        var environments: [EnvironmentLayout] = []
        for env in TelemetryEnvironment.allCases {
            let directory = dataDirectory.appendingPathComponent(env.rawValue, isDirectory: true)
            let path = directory.appendingPathComponent(EnvironmentDatabase.fileName).path
            guard FileManager.default.fileExists(atPath: path) else { continue }
            var configuration = Configuration()
            configuration.readonly = true
            // Beside the running service: a checkpoint holding a lock for a moment is waited for.
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            environments.append(try queue.read { try environment(env, directory: directory, db: $0) })
        }
        return StoreLayout(environments: environments)
    }

    private static func environment(_ env: TelemetryEnvironment, directory: URL, db: Database) throws -> EnvironmentLayout {
        let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        var kinds = RecordKind.allCases.map(KindLayout.init(kind:))
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT kind, sum(count) AS records, count(*) AS rows, sum(substr(keys, 1, 1) IN (?, ?)) AS segments,
                       sum(rawBytes) AS raw, sum(length(keys)) AS keys, sum(length(payload)) AS payload,
                       sum(length(bloom)) AS bloom, sum(storedBytes) AS stored
                FROM batch GROUP BY kind
                """,
            arguments: [Data([Segment.marker]), Data([GroupedSegment.marker])])
        while let row = try rows.next() {
            guard let i = kinds.firstIndex(where: { $0.kind.storedCode == row["kind"] }) else { continue }
            kinds[i].records = row["records"]
            kinds[i].rows = row["rows"]
            kinds[i].segments = row["segments"]
            kinds[i].rawBytes = row["raw"]
            kinds[i].keysBytes = row["keys"]
            kinds[i].payloadBytes = row["payload"]
            kinds[i].bloomBytes = row["bloom"] ?? 0
            kinds[i].storedBytes = row["stored"]
        }
        let segments = try Row.fetchCursor(
            db, sql: "SELECT kind, keys FROM batch WHERE substr(keys, 1, 1) IN (?, ?)",
            arguments: [Data([Segment.marker]), Data([GroupedSegment.marker])])
        while let row = try segments.next() {
            guard let i = kinds.firstIndex(where: { $0.kind.storedCode == row["kind"] }) else { continue }
            let keys: Data = row["keys"]
            kinds[i].guidTableBytes += Int64(try guidTableBytes(keysBlob: [UInt8](keys)))
        }
        return EnvironmentLayout(
            environment: env, fileBytes: DatabaseSpace.sizeOnDisk(directory), pageSize: pageSize, pages: pages, freePages: free,
            usedBytes: (pages - free) * pageSize, kinds: kinds)
    }

    /// The bytes of a segment's GUID table, read from its keys blob's head.
    static func guidTableBytes(keysBlob: [UInt8]) throws -> Int {
        if keysBlob.first == GroupedSegment.marker { return try GroupedSegment.layout(keysBlob).guidTable.count }
        var r = ByteReader(keysBlob)
        guard try r.byte() == Segment.marker else { throw StoreError.corruptBlock("not a segment") }
        _ = try r.varint()
        _ = try r.varint()
        let count = try r.varint()
        guard count <= UInt64(keysBlob.count / 16) else { throw StoreError.corruptBlock("GUID table larger than block") }
        return Int(count) * 16
    }
}
