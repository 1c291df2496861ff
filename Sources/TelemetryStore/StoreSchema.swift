import GRDB

/// The tables of one environment's database file. Prod and PPE each get their own file,
/// so test data never shares a file or table with customer data (SPEC §4).
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
        return m
    }
}
