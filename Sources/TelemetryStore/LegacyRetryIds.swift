import GRDB

/// The retry ids a store kept as texts before they became keys (``RetryKey``), left in place
/// by the migration as `event_id_text` and drained by retention. Rehashing them at start would
/// hold a full store's first start after the upgrade for many minutes (about 17 s a million
/// ids; a full 20 GiB store holds some 100 million), past systemd's start timeout, which would
/// kill the migration and start it again. So, while the table exists, a commit looks a
/// record up here before it takes a key, and every deletion of ids deletes here too; the
/// table goes when its last id has (a store created after the change never has one).
enum LegacyRetryIds {
    static let table = "event_id_text"

    static func exist(_ db: Database) throws -> Bool { try db.tableExists(table) }

    /// The statement a commit asks with: kind, app, eventId and incident, bound as text
    /// (a text ends at its first NUL, as when the ids were written: ``RetryIdentity``).
    static func lookup(_ db: Database) throws -> Statement {
        try db.makeStatement(sql: "SELECT 1 FROM \(table) WHERE kind = ? AND appId = ? AND eventId = ? AND incident = ?")
    }

    static func contains(_ lookup: Statement, kind: Int, appId: String, eventId: String, incident: String) throws -> Bool {
        try Int.fetchOne(lookup, arguments: [kind, appId, eventId, incident]) != nil
    }

    /// Deletes the ids of one kind in a seq span (a deleted batch's).
    static func delete(kind: Int, seqs: ClosedRange<Int64>, _ db: Database) throws {
        try db.execute(
            sql: "DELETE FROM \(table) INDEXED BY event_id_seq WHERE seq >= ? AND seq <= ? AND kind = ?",
            arguments: [seqs.lowerBound, seqs.upperBound, kind])
    }

    /// Deletes every id at or below `seq` (a spool's ids past the retry window).
    static func delete(through seq: Int64, _ db: Database) throws -> Int {
        try db.execute(sql: "DELETE FROM \(table) WHERE seq <= ?", arguments: [seq])
        return db.changesCount
    }

    /// The highest seq it holds, nil when empty.
    static func maxSeq(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM \(table)")
    }

    /// After a retention pass: deletes the ids below the oldest stored batch of their kind
    /// (their records are gone; a store written before ids left with their batches has such
    /// orphans), and drops the table once it is empty.
    static func sweep(_ db: Database) throws {
        let end = try BatchCommitter.nextSeq(db)
        for kind in [0, 1] {
            let oldest = try Int64.fetchOne(db, sql: "SELECT MIN(firstSeq) FROM batch WHERE kind = ?", arguments: [kind]) ?? end
            try db.execute(
                sql: "DELETE FROM \(table) INDEXED BY event_id_seq WHERE seq < ? AND kind = ?", arguments: [oldest, kind])
        }
        try dropIfEmpty(db)
    }

    static func dropIfEmpty(_ db: Database) throws {
        guard try Int.fetchOne(db, sql: "SELECT 1 FROM \(table) LIMIT 1") == nil else { return }
        try db.execute(sql: "DROP TABLE \(table)")
    }
}
