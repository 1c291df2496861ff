import GRDB
import StoreCore
import TelemetryModel

/// One environment's record commits: a plan of groups becomes batches, dedup ids, rollups,
/// incidents and device sightings (see DeviceIndexBuffer) in one transaction, on stable storage before it returns.
/// The group committer drives it, one plan per environment and commit cycle.
struct BatchCommitter: Sendable {
    let pool: DatabasePool
    let configuration: StoreConfiguration
    /// The devices of recent commits, written to the device index every few seconds.
    let deviceIndex: DeviceIndexBuffer

    /// One group of records from one request, as the group committer hands it over.
    struct Group: Sendable {
        var records: [DecodedRecord]
        var kind: RecordKind
        var receivedAt: Int64
        var incident: Incident?
        /// The group's batches encoded ahead by the request's task (nil: the writer encodes).
        var prepared: PreparedGroup? = nil
        /// The devices of the group's records, for the device index (nil: the writer finds them).
        var sightings: DeviceSightings? = nil
    }

    /// What one transaction of this environment writes. `visible` groups can be read as
    /// soon as it commits; `staged` groups are the parts of cross-environment requests,
    /// held back until the last environment decides them (see CrossEnvironmentCommit).
    struct Plan: Sendable {
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

    /// What a committed plan stored.
    struct Committed: Sendable {
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
        _ plan: Plan, nowMs: Int64, betweenKinds: @escaping @Sendable () throws -> Void = {},
        beforeCommit: @escaping @Sendable () throws -> Void = {}
    ) async throws -> Committed {
        let configuration = self.configuration
        let deviceIndex = self.deviceIndex
        return try await pool.write { db in
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
            try deviceIndex.add(visible.sightings, through: visible.nextSeq - 1, nowMs: nowMs, db: db)
            try beforeCommit()
            return Committed(
                visible: visible.outcomes, staged: staged, lastId: visible.nextSeq - 1, kinds: visible.kinds,
                rawBytes: writer.rawBytes, storedBytes: writer.storedBytes, batches: writer.batches)
        }
    }

    /// The id the next visible record gets.
    static func nextSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'nextSeq'") ?? 1
    }
}
