import GRDB
import StoreCore
import TelemetryModel

/// The tables of one environment's database file. Prod and PPE each get their own file,
/// so test data never shares a file or table with customer data.
enum StoreSchema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            // One row per committed batch. Records are numbered firstSeq ..< firstSeq+count.
            // Blob columns come last so a scan that only needs the bloom filter never makes
            // SQLite read the overflow pages of keys and payload.
            try db.execute(
                sql: """
                    CREATE TABLE batch (
                      id INTEGER PRIMARY KEY,
                      kind INTEGER NOT NULL,
                      firstSeq INTEGER NOT NULL,
                      count INTEGER NOT NULL,
                      minTime INTEGER NOT NULL,
                      maxTime INTEGER NOT NULL,
                      receivedAt INTEGER NOT NULL,
                      rawBytes INTEGER NOT NULL,
                      storedBytes INTEGER NOT NULL,
                      levelMask INTEGER NOT NULL,
                      bloom BLOB NOT NULL,
                      keys BLOB NOT NULL,
                      payload BLOB NOT NULL
                    );
                    CREATE INDEX batch_kind_seq ON batch(kind, firstSeq);
                    CREATE INDEX batch_received ON batch(receivedAt);
                    CREATE TABLE event_id (
                      appId TEXT NOT NULL,
                      eventId TEXT NOT NULL,
                      seq INTEGER NOT NULL,
                      PRIMARY KEY (appId, eventId)
                    ) WITHOUT ROWID;
                    CREATE INDEX event_id_seq ON event_id(seq);
                    CREATE TABLE incident (
                      id TEXT PRIMARY KEY,
                      guid TEXT NOT NULL UNIQUE,
                      appId TEXT NOT NULL,
                      deviceId TEXT,
                      sessionId TEXT,
                      identity TEXT,
                      description TEXT,
                      createdAt INTEGER NOT NULL,
                      recordCount INTEGER NOT NULL,
                      firstTime INTEGER,
                      lastTime INTEGER
                    );
                    CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                    INSERT INTO meta(key, value) VALUES ('nextSeq', 1);
                    """)
        }
        m.registerMigration("v2-dedupe-per-kind") { db in
            // Retries are recognised per kind, and a diagnostic upload's records only among
            // themselves: an event and a log record may share an eventId, and a record the
            // device already sent to /v1/logs is stored again, tagged, when the user shares
            // it in an upload. `incident` is '' outside uploads. Existing rows take the kind
            // of the batch holding their seq (events when that batch is gone) and ''.
            try db.execute(
                sql: """
                    CREATE TABLE event_id_v2 (
                      kind INTEGER NOT NULL,
                      appId TEXT NOT NULL,
                      eventId TEXT NOT NULL,
                      incident TEXT NOT NULL,
                      seq INTEGER NOT NULL,
                      PRIMARY KEY (kind, appId, eventId, incident)
                    ) WITHOUT ROWID;
                    INSERT INTO event_id_v2(kind, appId, eventId, incident, seq)
                      SELECT CASE WHEN EXISTS (
                               SELECT 1 FROM (SELECT firstSeq, count FROM batch
                                              WHERE kind = 1 AND firstSeq <= e.seq ORDER BY firstSeq DESC LIMIT 1)
                               WHERE firstSeq + count > e.seq) THEN 1 ELSE 0 END,
                             e.appId, e.eventId, '', e.seq
                      FROM event_id e;
                    DROP TABLE event_id;
                    ALTER TABLE event_id_v2 RENAME TO event_id;
                    CREATE INDEX event_id_seq ON event_id(seq);
                    """)
        }
        m.registerMigration("v2-cross-environment-stage") { db in
            // A request with records for both environments is committed all or nothing:
            // the first environment holds its part in `staged_batch` (invisible to queries)
            // until the last environment has committed a `stage_decision` row for the same
            // stage; see CrossEnvironmentCommit.swift.
            try db.execute(
                sql: """
                    CREATE TABLE staged_batch (
                      stage TEXT NOT NULL,
                      kind INTEGER NOT NULL,
                      firstSeq INTEGER NOT NULL,
                      count INTEGER NOT NULL,
                      minTime INTEGER NOT NULL,
                      maxTime INTEGER NOT NULL,
                      receivedAt INTEGER NOT NULL,
                      rawBytes INTEGER NOT NULL,
                      storedBytes INTEGER NOT NULL,
                      levelMask INTEGER NOT NULL,
                      bloom BLOB NOT NULL,
                      keys BLOB NOT NULL,
                      payload BLOB NOT NULL
                    );
                    CREATE TABLE stage_decision (stage TEXT PRIMARY KEY, decidedAt INTEGER NOT NULL);
                    """)
        }
        m.registerMigration("v3-event-rollups") { db in
            // Hourly rollups of the events the stats read, updated in the transaction that
            // makes the events visible (see EventRollupDelta); a store created before them
            // gets them computed from its records here. `hasStatusCode`/`outcome` stand for
            // the absent values, since key columns cannot be NULL.
            try db.execute(
                sql: """
                    CREATE TABLE event_rollup (
                      hour INTEGER NOT NULL,
                      name TEXT NOT NULL,
                      appId TEXT NOT NULL,
                      detail TEXT NOT NULL,
                      hasStatusCode INTEGER NOT NULL,
                      statusCode INTEGER NOT NULL,
                      outcome INTEGER NOT NULL,
                      count INTEGER NOT NULL,
                      lastReceivedAt INTEGER NOT NULL,
                      PRIMARY KEY (hour, name, appId, detail, hasStatusCode, statusCode, outcome)
                    ) WITHOUT ROWID;
                    CREATE TABLE event_latency_rollup (
                      hour INTEGER NOT NULL,
                      name TEXT NOT NULL,
                      appId TEXT NOT NULL,
                      detail TEXT NOT NULL,
                      lastReceivedAt INTEGER NOT NULL,
                      sketch BLOB NOT NULL,
                      PRIMARY KEY (hour, name, appId, detail)
                    ) WITHOUT ROWID;
                    """)
            _ = try EnvironmentRollups.rebuild(db, grains: [.hour])
        }
        m.registerMigration("v4-incident-shipped") { db in
            // Whether a remote backend acknowledged the incident (the spool's forwarder sets
            // it); the embedded store alone never reads it.
            try db.execute(sql: "ALTER TABLE incident ADD COLUMN shipped INTEGER NOT NULL DEFAULT 0")
        }
        m.registerMigration("v5-retry-id-marks") { db in
            // A spool keeps retry-recognition ids after shipping, for a window of time, but
            // `event_id` has no time: each spool maintenance pass notes the highest seq at that
            // moment, so "ids older than the window" is a seq range the seq index deletes.
            try db.execute(sql: "CREATE TABLE seq_mark (at INTEGER PRIMARY KEY, seq INTEGER NOT NULL)")
        }
        m.registerMigration("v6-batch-time-index") { db in
            // Every row's kind and device-time bounds in an R*Tree, kept by triggers on
            // `batch`, so a read of a time window finds its rows without visiting the others
            // (see BatchTimeIndex); filled from the rows already stored.
            try db.execute(sql: BatchTimeIndex.schema)
        }
        m.registerMigration("v7-device-index") { db in
            // Every (app, device) with stored records and when it was first and last received,
            // for lookups by case-insensitive id, prefix and nearest ids (see DeviceSightings);
            // a store created before it gets it from its records here. Incidents are listed
            // newest first by the time they arrived.
            try db.execute(
                sql: """
                    CREATE TABLE device_index (
                      device TEXT NOT NULL,
                      app TEXT NOT NULL,
                      deviceLower TEXT NOT NULL,
                      firstSeen INTEGER NOT NULL,
                      lastSeen INTEGER NOT NULL,
                      PRIMARY KEY (device, app)
                    ) WITHOUT ROWID;
                    CREATE INDEX device_index_lower ON device_index(deviceLower);
                    CREATE INDEX incident_created ON incident(createdAt);
                    """)
            try DeviceIndex.rebuild(db)
        }
        m.registerMigration("v8-minute-rollups") { db in
            // Per-minute rollups of the same events, so a window's edges (the current hour, a
            // "last 24 hours" with minute edges) read rollups, not records. Kept for the last
            // two days of event time (MinuteRollupHorizon); an existing store gets them
            // computed here from the records of the last two days it received, and the minutes
            // before that are read as before (hourly rollups and records).
            try db.execute(
                sql: """
                    CREATE TABLE event_minute_rollup (
                      minute INTEGER NOT NULL,
                      name TEXT NOT NULL,
                      appId TEXT NOT NULL,
                      detail TEXT NOT NULL,
                      hasStatusCode INTEGER NOT NULL,
                      statusCode INTEGER NOT NULL,
                      outcome INTEGER NOT NULL,
                      count INTEGER NOT NULL,
                      lastReceivedAt INTEGER NOT NULL,
                      PRIMARY KEY (minute, name, appId, detail, hasStatusCode, statusCode, outcome)
                    ) WITHOUT ROWID;
                    CREATE TABLE event_minute_latency_rollup (
                      minute INTEGER NOT NULL,
                      name TEXT NOT NULL,
                      appId TEXT NOT NULL,
                      detail TEXT NOT NULL,
                      lastReceivedAt INTEGER NOT NULL,
                      sketch BLOB NOT NULL,
                      PRIMARY KEY (minute, name, appId, detail)
                    ) WITHOUT ROWID;
                    """)
            let newest = try Int64.fetchOne(db, sql: "SELECT max(receivedAt) FROM batch WHERE kind = 0")
            try MinuteRollupHorizon.write(
                newest.map { EventRollupScope.minute(of: $0.saturatingSubtracting(EventRollupScope.minutesKeptMs)) } ?? .min, db: db)
            _ = try EnvironmentRollups.rebuild(db, grains: [.minute])
        }
        m.registerMigration("v9-retry-id-keys") { db in
            // Retry ids as 16-byte keyed hashes of (kind, app, eventId, incident) instead of
            // the texts (see RetryKey), with the kind beside the seq in the seq index so a
            // retention pass deletes one kind's ids of a seq span from the index alone. The
            // ids already written stay as texts until retention drains them (LegacyRetryIds).
            // The spool reads a batch's eventIds from its records since (EnvironmentSpool).
            try RetryKey.migrate(db)
        }
        m.registerMigration("v10-device-index-one-tree") { db in
            // The device index as one B-tree ordered by the lower-cased id, which every lookup
            // searches by, instead of a table keyed by (device, app) and a second index on the
            // lower-cased id: a new device is one random page write at commit, not two. With
            // high-cardinality devices the two trees were most of what a commit wrote
            // (BENCHMARKS.md, "What a commit writes").
            try db.execute(sql: DeviceIndex.oneTreeSchema(named: "device_index_v10"))
            try db.execute(
                sql: """
                    INSERT INTO device_index_v10(deviceLower, device, app, firstSeen, lastSeen)
                      SELECT deviceLower, device, app, firstSeen, lastSeen FROM device_index;
                    DROP TABLE device_index;
                    ALTER TABLE device_index_v10 RENAME TO device_index;
                    """)
        }
        m.registerMigration("v11-device-index-watermark") { db in
            // Commits buffer device sightings and write them every few seconds
            // (DeviceIndexBuffer); the watermark says which seqs the index accounts for.
            // Every record stored so far was indexed by its own commit.
            try DeviceIndexBuffer.setWatermark(try BatchCommitter.nextSeq(db) - 1, db: db)
        }
        return m
    }
}
