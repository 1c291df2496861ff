import Foundation
import GRDB
import StoreCore
import TelemetryModel

extension EnvironmentDatabase {
    /// What one transaction of this environment writes. `visible` groups can be read as
    /// soon as it commits; `staged` groups are the parts of cross-environment requests,
    /// held back until the last environment decides them (see CrossEnvironmentCommit).
    struct CommitPlan: Sendable {
        var visible: [Group] = []
        var staged: [Group] = []
        /// The stage id `staged` is kept under.
        var stage: String?
        /// The stage this transaction decides: its `stage_decision` row commits with it,
        /// which is the commit point of every cross-environment request of that stage.
        var decides: String?
        /// No stage waits on an earlier decision any more, so the old rows may go.
        var forgetEarlierDecisions = false
    }

    struct CommitResult: Sendable {
        var visible: [AppendOutcome]
        var staged: [AppendOutcome]
        /// The newest visible id after the commit; staged records are not visible yet.
        var lastId: Int64
        var kinds: Set<RecordKind>
        var rawBytes: Int
        var storedBytes: Int
        var batches: Int
    }

    /// Writes a plan in one transaction: dedup, insert the prepared batches (encoding only what
    /// was not prepared), commit+fsync.
    /// `betweenKinds` runs when a transaction writing both kinds has written the first, and
    /// `beforeCommit` after every row is written (test seams: what they throw rolls the
    /// transaction back).
    func commit(
        _ plan: CommitPlan, nowMs: Int64, betweenKinds: @escaping @Sendable () throws -> Void = {},
        beforeCommit: @escaping @Sendable () throws -> Void = {}
    ) async throws -> CommitResult {
        let configuration = self.configuration
        let cache = deviceIndexCache
        let (result, indexed) = try await pool.write { db in
            var writer = try BatchWriter(configuration: configuration, db: db, betweenKinds: betweenKinds)
            let firstSeq = try Self.nextSeq(db)
            let visible = try writer.write(plan.visible, staged: nil, from: firstSeq)
            try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'nextSeq'", arguments: [visible.nextSeq])
            // Staged records take the ids after every visible one, and nextSeq stays below
            // them until they are published: no other commit of this environment runs in
            // between, so ids stay in commit order for followers and cursors.
            var staged: [AppendOutcome] = []
            if !plan.staged.isEmpty, let stage = plan.stage {
                staged = try writer.write(plan.staged, staged: stage, from: visible.nextSeq).outcomes
            }
            if let decided = plan.decides {
                if plan.forgetEarlierDecisions { try db.execute(sql: "DELETE FROM stage_decision") }
                try db.execute(sql: "INSERT INTO stage_decision(stage, decidedAt) VALUES (?, ?)", arguments: [decided, nowMs])
            }
            // Staged records are indexed when they are published (CrossEnvironmentCommit).
            let indexed = visible.sightings.unknown(to: cache)
            try indexed.apply(db)
            try beforeCommit()
            let result = CommitResult(
                visible: visible.outcomes, staged: staged, lastId: visible.nextSeq - 1, kinds: visible.kinds,
                rawBytes: writer.rawBytes, storedBytes: writer.storedBytes, batches: writer.batches)
            return (result, indexed)
        }
        cache.remember(indexed)
        return result
    }

    static func nextSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'nextSeq'") ?? 1
    }
}

/// Turns groups of records into stored batches inside one transaction: drops retries of
/// stored records, numbers the survivors, inserts their batches (prepared by the requests,
/// or cut and compressed here for the rest), and
/// creates the groups' incidents with the counts of what was actually stored.
struct BatchWriter {
    let configuration: StoreConfiguration
    let db: Database
    let dedup: Statement
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
        dedup = try db.makeStatement(sql: "INSERT OR IGNORE INTO event_id(kind, appId, eventId, incident, seq) VALUES (?, ?, ?, ?, ?)")
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
    mutating func write(_ groups: [EnvironmentDatabase.Group], staged: String?, from firstSeq: Int64) throws -> Written {
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
        of kind: RecordKind, in groups: [EnvironmentDatabase.Group], outcomes: inout [AppendOutcome], nextSeq: Int64
    ) throws -> [Survivors] {
        var result: [Survivors] = []
        var seq = nextSeq
        for (g, group) in groups.enumerated() where group.kind == kind {
            var indices: [Int] = []
            indices.reserveCapacity(group.records.count)
            for (index, record) in group.records.enumerated() {
                if let eventId = record.eventId {
                    // Records keep arrival order, so a survivor's id is known now.
                    try dedup.execute(arguments: [kind.storedCode, record.keys.appId, eventId, record.keys.incident, seq])
                    if db.changesCount == 0 {
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

extension RecordKind {
    /// The `kind` column of `batch` and `event_id`: 0 events, 1 logs.
    var storedCode: Int { self == .event ? 0 : 1 }
}
