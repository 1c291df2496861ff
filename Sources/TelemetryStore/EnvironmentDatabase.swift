import Compression
import Foundation
import GRDB
import TelemetryModel

/// One environment's SQLite file (WAL mode, `synchronous=FULL`: a commit is on stable
/// storage before it returns, and a torn tail of the WAL is discarded by SQLite's checksums
/// on the next open). The group committer is its only writer; readers run concurrently on
/// WAL snapshots, so queries never block ingest.
final class EnvironmentDatabase: Sendable {
    let env: TelemetryEnvironment
    let directory: URL
    let pool: DatabasePool
    let configuration: StoreConfiguration

    init(
        env: TelemetryEnvironment, directory: URL, configuration: StoreConfiguration,
        maintenance: StoreMaintenanceNotice = { _, _ in }
    ) throws {
        self.env = env
        self.directory = directory
        self.configuration = configuration
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = Configuration()
        config.label = "store-\(env.rawValue)"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
            // Debian's SQLite zeroes every freed page by default, which writes each deleted
            // batch to the WAL once more: retention on a nearly full disk would need as much
            // room as it frees. FAST zeroes only what costs no extra I/O; incremental vacuum
            // then cuts the freed pages off the file, so deleted records do not stay in it.
            try db.execute(sql: "PRAGMA secure_delete = FAST")
        }
        pool = try DatabasePool(path: directory.appendingPathComponent("records.sqlite").path, configuration: config)
        try enableIncrementalVacuum(notice: maintenance)
        try StoreSchema.migrator.migrate(pool)
    }

    /// One group of records from one request, as the committer hands it over.
    struct Group: Sendable {
        var records: [DecodedRecord]
        var kind: RecordKind
        var receivedAt: Int64
        var incident: Incident?
    }

    struct CommitResult: Sendable {
        var outcomes: [AppendOutcome]
        var lastId: Int64
        var kinds: Set<RecordKind>
        var rawBytes: Int
        var storedBytes: Int
        var batches: Int
    }

    /// Writes every group in one transaction: dedup, batch, compress, insert, commit+fsync.
    func commit(_ groups: [Group]) async throws -> CommitResult {
        let configuration = self.configuration
        return try await pool.write { db in
            var nextSeq = try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'nextSeq'") ?? 1
            var outcomes = [AppendOutcome](repeating: AppendOutcome(stored: 0, duplicates: 0, ids: []), count: groups.count)
            var rawBytes = 0
            var storedBytes = 0
            var batches = 0
            var kinds = Set<RecordKind>()
            let dedup = try db.makeStatement(sql: "INSERT OR IGNORE INTO event_id(appId, eventId, seq) VALUES (?, ?, ?)")
            for kind in RecordKind.allCases {
                // Survivors of this kind across all groups, in arrival order.
                let arrivals = try Self.survivors(of: kind, in: groups, outcomes: &outcomes, nextSeq: nextSeq, dedup: dedup, db: db)
                var survivors: [DecodedRecord] = []
                var receivedAt: [Int64] = []
                survivors.reserveCapacity(arrivals.count)
                for (position, arrival) in arrivals.enumerated() {
                    let id = nextSeq + Int64(position)
                    outcomes[arrival.group].ids.append(id)
                    outcomes[arrival.group].stored += 1
                    survivors.append(arrival.record)
                    receivedAt.append(groups[arrival.group].receivedAt)
                }
                if survivors.isEmpty { continue }
                kinds.insert(kind)
                var start = 0
                while start < survivors.count {
                    var end = start
                    var bytes = 0
                    while end < survivors.count, end - start < configuration.maxBatchRecords,
                        bytes == 0 || bytes + survivors[end].json.count < configuration.maxBatchBytes
                    {
                        bytes += survivors[end].json.count + 1
                        end += 1
                    }
                    let written = try Self.insertBatch(
                        survivors[start..<end], kind: kind, firstSeq: nextSeq + Int64(start),
                        receivedAt: receivedAt[end - 1], level: configuration.zlibLevel, db: db)
                    rawBytes += written.raw
                    storedBytes += written.stored
                    batches += 1
                    start = end
                }
                nextSeq += Int64(survivors.count)
            }
            try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'nextSeq'", arguments: [nextSeq])
            return CommitResult(
                outcomes: outcomes, lastId: nextSeq - 1, kinds: kinds, rawBytes: rawBytes,
                storedBytes: storedBytes, batches: batches)
        }
    }

    /// The records of `kind` that are not retries of a stored (`appId`, `eventId`), in
    /// arrival order, noting duplicates in the outcomes; creates the groups' incidents.
    private static func survivors(
        of kind: RecordKind, in groups: [Group], outcomes: inout [AppendOutcome], nextSeq: Int64, dedup: Statement,
        db: Database
    ) throws -> [(record: DecodedRecord, group: Int)] {
        var arrivals: [(record: DecodedRecord, group: Int)] = []
        for (g, group) in groups.enumerated() where group.kind == kind {
            for (index, record) in group.records.enumerated() {
                if let eventId = record.eventId {
                    // Records keep arrival order, so a survivor's id is known now.
                    try dedup.execute(arguments: [record.keys.appId, eventId, nextSeq + Int64(arrivals.count)])
                    if db.changesCount == 0 {
                        outcomes[g].duplicates += 1
                        outcomes[g].duplicateIndices.append(index)
                        continue
                    }
                }
                arrivals.append((record, g))
            }
            if let incident = group.incident {
                try Self.insert(incident, db: db)
            }
        }
        return arrivals
    }

    private static func insertBatch(
        _ records: ArraySlice<DecodedRecord>, kind: RecordKind, firstSeq: Int64, receivedAt: Int64,
        level: Int32, db: Database
    ) throws -> (raw: Int, stored: Int) {
        var payload: [UInt8] = []
        payload.reserveCapacity(records.reduce(0) { $0 + $1.json.count + 1 })
        var keys: [RecordKeys] = []
        keys.reserveCapacity(records.count)
        var terms = Set<BloomTerm>()
        var minTime = Int64.max
        var maxTime = Int64.min
        var levelMask = 0
        for record in records {
            if !payload.isEmpty { payload.append(0x0A) }
            payload.append(contentsOf: record.json)
            keys.append(record.keys)
            for term in BloomTerm.terms(of: record.keys) { terms.insert(term) }
            minTime = min(minTime, record.keys.time)
            maxTime = max(maxTime, record.keys.time)
            if let l = record.keys.level { levelMask |= 1 << l.rawValue }
        }
        var bloom = BloomFilter(expected: terms.count)
        for term in terms { bloom.insert(term) }
        let compressedPayload = try Deflate.compress(payload, level: level)
        let compressedKeys = try Deflate.compress(KeysBlock.encode(keys), level: level)
        try db.execute(
            sql: """
                INSERT INTO batch(kind, firstSeq, count, minTime, maxTime, receivedAt, rawBytes, storedBytes,
                                  levelMask, bloom, keys, payload)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                kind == .event ? 0 : 1, firstSeq, records.count, minTime, maxTime, receivedAt, payload.count,
                compressedPayload.count + compressedKeys.count, levelMask, Data(bloom.bits),
                Data(compressedKeys), Data(compressedPayload),
            ])
        return (payload.count, compressedPayload.count + compressedKeys.count)
    }

    private static func insert(_ i: Incident, db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO incident(id, guid, appId, deviceId, sessionId, identity, description, createdAt,
                                     recordCount, firstTime, lastTime)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                i.id, i.guid, i.appId, i.deviceId, i.sessionId, i.identity, i.description, i.createdAt,
                i.recordCount, i.firstTime, i.lastTime,
            ])
    }

    func incident(id: String) async throws -> Incident? {
        let env = self.env
        return try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM incident WHERE id = ? OR guid = ?", arguments: [id, id.lowercased()])
            else { return nil }
            return Incident(
                id: row["id"], guid: row["guid"], env: env, appId: row["appId"], deviceId: row["deviceId"],
                sessionId: row["sessionId"], identity: row["identity"], description: row["description"],
                createdAt: row["createdAt"], recordCount: row["recordCount"], firstTime: row["firstTime"],
                lastTime: row["lastTime"])
        }
    }

    func latestID() async throws -> Int64 {
        try await pool.read { db in
            (try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'nextSeq'") ?? 1) - 1
        }
    }

    /// Bytes of this environment's files (database, WAL, shared memory).
    func sizeOnDisk() -> Int64 {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var total: Int64 = 0
        for f in files {
            let attrs = try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(f).path)
            total += (attrs?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return total
    }
}
