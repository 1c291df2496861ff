import Foundation
import GRDB
import StoreCore
import TelemetryModel

/// Turns groups of records into stored batches inside one transaction: drops retries of
/// stored records, numbers the survivors, inserts their batches (prepared by the requests,
/// or cut and compressed here for the rest), and creates the groups' incidents with the
/// counts of what was actually stored.
struct BatchWriter {
    let configuration: StoreConfiguration
    let db: Database
    let dedup: BoundStatement
    let retryKey: RetryKey
    /// Asks the ids written before they were keys, while any are left (``LegacyRetryIds``).
    let legacyLookup: Statement?
    /// Called before a kind's rows when another kind's are already written (a test seam).
    let betweenKinds: () throws -> Void
    var rawBytes = 0
    var storedBytes = 0
    var batches = 0
    /// Kinds this transaction has written so far (visible or staged).
    var kindsWritten = Set<RecordKind>()

    init(configuration: StoreConfiguration, db: Database, betweenKinds: @escaping () throws -> Void = {}) throws {
        self.configuration = configuration
        self.db = db
        self.betweenKinds = betweenKinds
        dedup = try BoundStatement(db, sql: "INSERT OR IGNORE INTO event_id(key, kind, seq) VALUES (?, ?, ?)")
        retryKey = try RetryKey.load(db)
        legacyLookup = try LegacyRetryIds.exist(db) ? LegacyRetryIds.lookup(db) : nil
    }

    struct Written {
        var outcomes: [AppendOutcome]
        var nextSeq: Int64
        var kinds: Set<RecordKind>
        /// The devices of the records stored (not of the retries dropped).
        var sightings = DeviceSightings()
    }

    /// Writes `groups` into `batch`, or into `staged_batch` under `staged`, numbering from
    /// `firstSeq`. Records of one kind keep arrival order across groups. A group whose
    /// records all survive dedupe stores the batches its request prepared; the survivors of
    /// the others (retries, and groups too small to prepare) are packed and encoded here.
    mutating func write(_ groups: [BatchCommitter.Group], staged: String?, from firstSeq: Int64) throws -> Written {
        var outcomes = [AppendOutcome](repeating: AppendOutcome(stored: 0, duplicates: 0, ids: []), count: groups.count)
        var times = [(min: Int64, max: Int64)?](repeating: nil, count: groups.count)
        var nextSeq = firstSeq
        var kinds = Set<RecordKind>()
        var sightings = DeviceSightings()
        for kind in RecordKind.allCases {
            let survivors = try survivors(of: kind, in: groups, outcomes: &outcomes, nextSeq: nextSeq)
            let stored = survivors.reduce(0) { $0 + $1.indices.count }
            guard stored > 0 else { continue }
            if !kindsWritten.subtracting([kind]).isEmpty { try betweenKinds() }
            for s in survivors where !s.indices.isEmpty {
                let group = groups[s.group]
                if s.isWholeGroup, let prepared = group.sightings {
                    sightings.merge(prepared)
                } else {
                    sightings.merge(DeviceSightings(s.indices.lazy.map { group.records[$0] }, receivedAt: group.receivedAt))
                }
            }
            kinds.insert(kind)
            kindsWritten.insert(kind)
            if kind == .event, staged == nil {
                // Only survivors are counted, in the transaction that stores them; staged
                // events are counted when they are published (CrossEnvironmentCommit).
                var rollups = EventRollupDelta()
                for s in survivors {
                    let group = groups[s.group]
                    if s.isWholeGroup, let prepared = group.prepared?.rollups {
                        rollups.merge(prepared)
                    } else {
                        for i in s.indices { rollups.add(group.records[i].keys, receivedAt: group.receivedAt) }
                    }
                }
                try rollups.apply(db)
            }
            var seq = nextSeq
            for s in survivors {
                for i in s.indices {
                    outcomes[s.group].ids.append(seq)
                    outcomes[s.group].stored += 1
                    seq += 1
                    let t = groups[s.group].records[i].keys.time
                    times[s.group] = times[s.group].map { (min($0.min, t), max($0.max, t)) } ?? (t, t)
                }
            }
            // Consecutive survivors without prepared batches are packed together; a group
            // with prepared batches cuts the run, so ids stay in arrival order.
            var run: [DecodedRecord] = []
            var runReceivedAt: Int64 = 0
            seq = nextSeq
            for s in survivors {
                let group = groups[s.group]
                if s.isWholeGroup, let prepared = group.prepared {
                    seq = try insertPacked(run, kind: kind, firstSeq: seq, receivedAt: runReceivedAt, staged: staged)
                    run.removeAll()
                    for batch in prepared.batches {
                        try insert(batch, kind: kind, firstSeq: seq, receivedAt: group.receivedAt, staged: staged)
                        seq += Int64(batch.count)
                    }
                } else if !s.indices.isEmpty {
                    for i in s.indices { run.append(group.records[i]) }
                    runReceivedAt = group.receivedAt
                }
            }
            _ = try insertPacked(run, kind: kind, firstSeq: seq, receivedAt: runReceivedAt, staged: staged)
            nextSeq += Int64(stored)
        }
        for (g, group) in groups.enumerated() {
            guard var incident = group.incident else { continue }
            guard staged == nil else { throw StoreError.invalidRequest("an incident cannot be part of a cross-environment request") }
            // The incident says what was stored, so its count agrees with its records.
            incident.recordCount = outcomes[g].stored
            incident.firstTime = times[g]?.min
            incident.lastTime = times[g]?.max
            try insert(incident)
        }
        return Written(outcomes: outcomes, nextSeq: nextSeq, kinds: kinds, sightings: sightings)
    }

    /// The records of one group that are not retries of stored records.
    private struct Survivors {
        var group: Int
        var indices: [Int]
        /// Every record of the group survived: its prepared batches hold exactly these.
        var isWholeGroup: Bool
    }

    /// The records of `kind` that do not repeat a stored record, group by group in arrival
    /// order, noting duplicates in the outcomes. A record's identity is (kind, app, eventId)
    /// and, for a diagnostic upload's records, its incident: the upload keeps its own copy.
    private func survivors(
        of kind: RecordKind, in groups: [BatchCommitter.Group], outcomes: inout [AppendOutcome], nextSeq: Int64
    ) throws -> [Survivors] {
        var result: [Survivors] = []
        var seq = nextSeq
        for (g, group) in groups.enumerated() where group.kind == kind {
            var indices: [Int] = []
            indices.reserveCapacity(group.records.count)
            for (index, record) in group.records.enumerated() {
                if let eventId = record.eventId {
                    // Records keep arrival order, so a survivor's id is known now.
                    let key = retryKey.key(
                        kind: kind.storedCode, appId: record.keys.appId, eventId: eventId, incident: record.keys.incident)
                    let legacy = try legacyLookup.map {
                        try LegacyRetryIds.contains(
                            $0, kind: kind.storedCode, appId: record.keys.appId, eventId: eventId, incident: record.keys.incident)
                    }
                    var stored = false
                    if legacy != true {
                        stored =
                            try dedup.run {
                                $0.add(key)
                                $0.add(kind.storedCode)
                                $0.add(seq)
                            } > 0
                    }
                    if !stored {
                        outcomes[g].duplicates += 1
                        outcomes[g].duplicateIndices.append(index)
                        continue
                    }
                }
                indices.append(index)
                seq += 1
            }
            result.append(Survivors(group: g, indices: indices, isWholeGroup: indices.count == group.records.count))
        }
        return result
    }

    /// Encodes and inserts a run of records in as many batches as it takes; returns the seq
    /// after the last.
    private mutating func insertPacked(
        _ run: [DecodedRecord], kind: RecordKind, firstSeq: Int64, receivedAt: Int64, staged: String?
    ) throws -> Int64 {
        var seq = firstSeq
        for range in PreparedBatch.cuts(run, configuration: configuration) {
            let batch = try PreparedBatch.encode(run[range], zlibLevel: configuration.zlibLevel)
            try insert(batch, kind: kind, firstSeq: seq, receivedAt: receivedAt, staged: staged)
            seq += Int64(batch.count)
        }
        return seq
    }

    private mutating func insert(_ batch: PreparedBatch, kind: RecordKind, firstSeq: Int64, receivedAt: Int64, staged: String?) throws {
        let columns = "kind, firstSeq, count, minTime, maxTime, receivedAt, rawBytes, storedBytes, levelMask, bloom, keys, payload"
        var arguments: StatementArguments = [
            kind.storedCode, firstSeq, batch.count, batch.minTime, batch.maxTime, receivedAt, batch.rawBytes,
            batch.storedBytes, batch.levelMask, Data(batch.bloom), Data(batch.keys), Data(batch.payload),
        ]
        if let staged {
            arguments += [staged]
            try db.execute(
                sql: "INSERT INTO staged_batch(\(columns), stage) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", arguments: arguments)
        } else {
            try db.execute(sql: "INSERT INTO batch(\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", arguments: arguments)
        }
        rawBytes += batch.rawBytes
        storedBytes += batch.storedBytes
        batches += 1
    }

    private func insert(_ i: Incident) throws {
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
}
