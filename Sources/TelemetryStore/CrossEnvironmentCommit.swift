import GRDB
import TelemetryModel

/// How a request with records for both environments is stored all or nothing, although
/// prod and PPE are separate SQLite files (in WAL mode SQLite cannot commit two files
/// atomically, and PPE data must never share a file with prod data):
///
/// 1. Environments commit in a fixed order: `staging` (prod) first, `deciding` (PPE) last.
/// 2. The staging transaction writes the request's prod part to `staged_batch` under a
///    stage id: durable, its dedupe keys claimed, but invisible to queries.
/// 3. The deciding transaction writes the PPE part to `batch` together with a
///    `stage_decision` row for the stage id. That commit is the request's commit point.
/// 4. The staged part is published (moved into `batch`, its events added to the rollups).
///    If step 3 failed it is discarded instead, with its dedupe keys, and the request is
///    answered with an error.
///
/// Recovery (`recover`, at open and before the next staging commit when step 4 failed)
/// publishes staged records whose stage has a decision and discards the others. So after
/// a crash at any point, or a failed commit, a request is wholly stored or wholly absent.
/// One stage per commit cycle covers all cross-environment requests of that cycle.
///
/// Only PPE's `stage_decision` rows (a stage id and a time) live beside the other
/// environment's data; no record ever does.
struct CrossEnvironmentCommit: Sendable {
    static let staging = TelemetryEnvironment.prod
    static let deciding = TelemetryEnvironment.ppe

    let stagingDatabase: EnvironmentDatabase
    let decidingDatabase: EnvironmentDatabase

    init(databases: PerEnvironment<EnvironmentDatabase>) {
        stagingDatabase = databases[Self.staging]
        decidingDatabase = databases[Self.deciding]
    }

    /// What publishing made visible, for the followers' commit notice.
    struct Published: Sendable {
        var kinds: Set<RecordKind> = []
        var records = 0
        var lastId: Int64 = 0
    }

    /// Resolves whatever an interrupted commit left staged; synchronous, for opening the store.
    func recover() throws -> Published {
        let stages = try stagingDatabase.pool.read { try Self.stages($0) }
        let decided = try decidingDatabase.pool.read { try Self.decided(stages, $0) }
        var published = Published()
        if !stages.isEmpty {
            published = try stagingDatabase.pool.write { try Self.resolve(stages, decided: decided, $0) }
        }
        // Every stage is settled now, so no decision is needed any more.
        if try decidingDatabase.pool.read({ try Bool.fetchOne($0, sql: "SELECT 1 FROM stage_decision LIMIT 1") ?? false }) {
            try decidingDatabase.pool.write { try $0.execute(sql: "DELETE FROM stage_decision") }
        }
        return published
    }

    /// The same, from the committer between commit cycles.
    func recover() async throws -> Published {
        let stages = try await stagingDatabase.pool.read { try Self.stages($0) }
        let decided = try await decidingDatabase.pool.read { try Self.decided(stages, $0) }
        return try await stagingDatabase.pool.write { try Self.resolve(stages, decided: decided, $0) }
    }

    /// Step 4 when the decision committed.
    func publish(_ stage: String) async throws -> Published {
        try await stagingDatabase.pool.write { try Self.resolve([stage], decided: [stage], $0) }
    }

    /// Step 4 when the decision did not commit.
    func discard(_ stage: String) async throws {
        _ = try await stagingDatabase.pool.write { try Self.resolve([stage], decided: [], $0) }
    }

    private static func stages(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT DISTINCT stage FROM staged_batch")
    }

    private static func decided(_ stages: [String], _ db: Database) throws -> Set<String> {
        Set(try stages.filter { try Bool.fetchOne(db, sql: "SELECT 1 FROM stage_decision WHERE stage = ?", arguments: [$0]) ?? false })
    }

    /// Publishes the decided stages and discards the others, in one staging transaction.
    private static func resolve(_ stages: [String], decided: Set<String>, _ db: Database) throws -> Published {
        var published = Published()
        for stage in stages {
            let rows = try Row.fetchAll(db, sql: "SELECT kind, firstSeq, count FROM staged_batch WHERE stage = ?", arguments: [stage])
            if decided.contains(stage) {
                try db.execute(
                    sql: """
                        INSERT INTO batch(kind, firstSeq, count, minTime, maxTime, receivedAt, rawBytes, storedBytes,
                                          levelMask, bloom, keys, payload)
                        SELECT kind, firstSeq, count, minTime, maxTime, receivedAt, rawBytes, storedBytes,
                               levelMask, bloom, keys, payload
                        FROM staged_batch WHERE stage = ? ORDER BY firstSeq
                        """, arguments: [stage])
                var rollups = EventRollupDelta()
                try rollups.addBatches(
                    db, sql: "SELECT receivedAt, keys FROM staged_batch WHERE stage = ? AND kind = 0", arguments: [stage])
                try rollups.apply(db)
                var sightings = DeviceSightings()
                try sightings.addBatches(db, sql: "SELECT receivedAt, keys FROM staged_batch WHERE stage = ?", arguments: [stage])
                try sightings.apply(db)
                var end = try BatchCommitter.nextSeq(db)
                for row in rows {
                    end = max(end, row["firstSeq"] + row["count"] as Int64)
                    published.kinds.insert(row["kind"] as Int == 0 ? .event : .log)
                    published.records += row["count"] as Int
                }
                try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'nextSeq'", arguments: [end])
            } else {
                // The request was never acknowledged: free its dedupe keys so a retry is stored.
                let legacy = try LegacyRetryIds.exist(db)
                for row in rows {
                    let first: Int64 = row["firstSeq"]
                    try db.execute(
                        sql: "DELETE FROM event_id WHERE seq >= ? AND seq < ?", arguments: [first, first + (row["count"] as Int64)])
                    if legacy, row["count"] as Int64 > 0 {
                        try LegacyRetryIds.delete(kind: row["kind"], seqs: first...(first + (row["count"] as Int64) - 1), db)
                    }
                }
            }
            try db.execute(sql: "DELETE FROM staged_batch WHERE stage = ?", arguments: [stage])
        }
        published.lastId = try BatchCommitter.nextSeq(db) - 1
        return published
    }
}
