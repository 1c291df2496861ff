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
    /// `firstSeq`. Records are stored segment by segment (``CommitSegment``: one prepared
    /// group, or a run of small ones packed together), groups in arrival order, each segment
    /// laid out by app. A prepared group whose records all survive dedupe stores the batches
    /// its request encoded; the survivors of the others (retries, and groups too small to
    /// prepare) are encoded here, in the same layout, so ids always follow the batches.
    mutating func write(_ groups: [BatchCommitter.Group], staged: String?, from firstSeq: Int64) throws -> Written {
        var outcomes = [AppendOutcome](repeating: AppendOutcome(stored: 0, duplicates: 0, ids: []), count: groups.count)
        var times = [(min: Int64, max: Int64)?](repeating: nil, count: groups.count)
        var nextSeq = firstSeq
        var kinds = Set<RecordKind>()
        var sightings = DeviceSightings()
        for kind in RecordKind.allCases {
            let segments = CommitSegment.segments(of: kind, in: groups)
            let kept = try survivors(of: kind, in: segments, groups: groups, outcomes: &outcomes, nextSeq: nextSeq)
            let stored = kept.segments.reduce(0) { $0 + $1.count }
            guard stored > 0 else { continue }
            if !kindsWritten.subtracting([kind]).isEmpty { try betweenKinds() }
            for s in kept.groups where !s.indices.isEmpty {
                let group = groups[s.group]
                if s.isWholeGroup, let prepared = group.sightings {
                    sightings.merge(prepared)
                } else {
                    sightings.merge(DeviceSightings(s.indices.lazy.map { group.records[$0] }, receivedAt: group.receivedAt))
                }
                for i in s.indices {
                    let t = group.records[i].keys.time
                    times[s.group] = times[s.group].map { (min($0.min, t), max($0.max, t)) } ?? (t, t)
                }
            }
            kinds.insert(kind)
            kindsWritten.insert(kind)
            if kind == .event, staged == nil {
                // Only survivors are counted, in the transaction that stores them; staged
                // events are counted when they are published (CrossEnvironmentCommit).
                var rollups = EventRollupDelta()
                for s in kept.groups {
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
            for (segment, survived) in zip(segments, kept.segments) where survived.count > 0 {
                if let g = segment.prepared, survived.count == segment.members.count, let prepared = groups[g].prepared {
                    for batch in prepared.batches {
                        try insert(batch, kind: kind, firstSeq: seq, receivedAt: segment.receivedAt, staged: staged)
                        seq += Int64(batch.count)
                    }
                    continue
                }
                // The survivors run by run (both ascending), each run cut and encoded on its own.
                var next = 0
                for run in segment.runs {
                    var records: [DecodedRecord] = []
                    while next < survived.count, survived[next] < run.upperBound {
                        let member = segment.members[survived[next]]
                        records.append(groups[member.group].records[member.index])
                        next += 1
                    }
                    seq = try insertPacked(records, kind: kind, firstSeq: seq, receivedAt: segment.receivedAt, staged: staged)
                }
            }
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
        /// Positions in the group, ascending.
        var indices: [Int]
        /// Every record of the group survived: its prepared batches hold exactly these.
        var isWholeGroup: Bool
    }

    /// What dedupe kept of one kind: per segment, the positions in `members` that survived
    /// (ascending); per group, the records that survived.
    private struct Kept {
        var segments: [[Int]]
        var groups: [Survivors]
    }

    /// The records of `kind` that do not repeat a stored record, segment by segment in stored
    /// order (which is also the order ids are given in), noting ids and duplicates in the
    /// outcomes in the order of each group's records. A record's identity is (kind, app,
    /// eventId) and, for a diagnostic upload's records, its incident: the upload keeps its
    /// own copy. Two copies in one commit share an app, so the one that arrived first is kept.
    private func survivors(
        of kind: RecordKind, in segments: [CommitSegment], groups: [BatchCommitter.Group], outcomes: inout [AppendOutcome],
        nextSeq: Int64
    ) throws -> Kept {
        var kept = Kept(segments: [], groups: [])
        // The id of each group's records by position (0, below every id: a duplicate), so the outcome lists
        // them in the request's order without a sort.
        var seqs = groups.map { $0.kind == kind ? [Int64](repeating: 0, count: $0.records.count) : [] }
        var seq = nextSeq
        for segment in segments {
            var survived: [Int] = []
            survived.reserveCapacity(segment.members.count)
            for (position, member) in segment.members.enumerated() {
                let record = groups[member.group].records[member.index]
                if let eventId = record.eventId {
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
                        outcomes[member.group].duplicates += 1
                        outcomes[member.group].duplicateIndices.append(member.index)
                        continue
                    }
                }
                survived.append(position)
                seqs[member.group][member.index] = seq
                seq += 1
            }
            kept.segments.append(survived)
        }
        for (g, group) in groups.enumerated() where group.kind == kind {
            let indices = seqs[g].indices.filter { seqs[g][$0] != 0 }
            outcomes[g].ids += indices.map { seqs[g][$0] }
            outcomes[g].stored += indices.count
            outcomes[g].duplicateIndices.sort()
            kept.groups.append(Survivors(group: g, indices: indices, isWholeGroup: indices.count == group.records.count))
        }
        return kept
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
