/// The tables of one ClickHouse database (production's, or PPE's `<database>_ppe`: test data
/// never shares a table with customer data) and the versioned steps that create them.
///
/// Every step is idempotent (`IF NOT EXISTS`) and recorded in `schema_migrations`, so
/// several collectors may run them at once against the same server; there is no `ON
/// CLUSTER` (18.16 has no distributed-DDL coordinator): each collector runs them on each of
/// its own endpoints, which is enough when each collector knows only its own shard.
///
/// Names a reader uses:
/// - `records`: what to query, always. Without a cluster it is the `ReplacingMergeTree`
///   itself; with one it is a `Distributed` table over `records_local` on every shard.
/// - `incidents`: the same arrangement over `incidents_local`.
/// - `event_ids`: the same over `event_ids_local`; what a collector asks before it
///   acknowledges, to recognise a client's retry that another collector stored first.
/// Re-sent rows are identical (see ``RecordID``) and land on the same shard (the sharding key
/// is a hash of the row's own app and device), so a read with `FINAL` (or `LIMIT 1 BY id,
/// collector`) never shows a duplicate, merged yet or not.
public struct ClickHouseSchema: Sendable {
    /// One versioned step: the statements that bring a database from `version - 1` to it.
    public struct Migration: Sendable {
        public var version: Int
        public var summary: StaticString
        public var statements: @Sendable (ClickHouseSchema) -> [ClickHouseSQL]
    }

    public let database: String
    public let cluster: String?

    public init(database: String, cluster: String?) {
        self.database = database
        self.cluster = cluster
    }

    /// The table rows are stored in on this server: `records_local` under a cluster.
    public var recordsStorage: String { cluster == nil ? "records" : "records_local" }
    public var incidentsStorage: String { cluster == nil ? "incidents" : "incidents_local" }
    public var eventIDsStorage: String { cluster == nil ? "event_ids" : "event_ids_local" }

    /// The newest schema this daemon knows; it refuses to run against a newer one.
    public static var knownVersion: Int { migrations.map(\.version).max() ?? 0 }

    public static let migrations: [Migration] = [
        Migration(version: 1, summary: "records and incidents") { schema in
            schema.recordsTables() + schema.incidentsTables()
        },
        Migration(version: 2, summary: "event_ids: retries recognised across collectors") { schema in
            schema.eventIDsTables()
        },
    ]

    /// The bookkeeping table itself; `ReplacingMergeTree` on the version, so two collectors
    /// recording the same step leave one row after a merge (reads take `max(version)`).
    var migrationsTable: ClickHouseSQL {
        """
        CREATE TABLE IF NOT EXISTS \(identifier: database).schema_migrations (
          version UInt32, summary String, appliedAt DateTime DEFAULT now()
        ) ENGINE = ReplacingMergeTree ORDER BY version
        """
    }

    /// `records`: one row per record.
    /// - Sort key `(kind, app, device, time, id, collector)`: every query reads one kind;
    ///   a support engineer's questions start from an app and a device over a time window, so
    ///   those are the prefix the primary index can skip by; it ends with the row's identity
    ///   `(id, collector)`, which makes a re-sent row a duplicate key that `ReplacingMergeTree`
    ///   folds away.
    /// - Partitions `(retentionClass, day of receipt)`: retention ages classes differently
    ///   (verbose logs shortest), and 18.16 has no `TTL` clause (it came in 19.6), so the
    ///   daemon expires data by dropping whole partitions, which is also the cheapest delete
    ///   ClickHouse has; re-sent rows share their original's partition, as folding needs.
    /// - Times are Int64 milliseconds (18.16 has no DateTime64); `identity` is lower-cased
    ///   like the embedded store's keys; `raw` is the record's JSON exactly as received.
    func recordsTables() -> [ClickHouseSQL] {
        var statements: [ClickHouseSQL] = [
            """
            CREATE TABLE IF NOT EXISTS \(identifier: database).\(identifier: recordsStorage) (
              id Int64,
              collector UInt8,
              kind Enum8('event' = 0, 'log' = 1),
              receivedAt Int64,
              time Int64,
              app String,
              device String,
              session String,
              identity String,
              name String,
              detail String,
              statusCode Nullable(Int32),
              durationMs Nullable(Float64),
              succeeded Nullable(UInt8),
              level Nullable(Enum8('verbose' = 0, 'info' = 1, 'warning' = 2, 'error' = 3)),
              incident String,
              retentionClass Enum8('verboseLogs' = 0, 'logs' = 1, 'events' = 2),
              raw String
            ) ENGINE = ReplacingMergeTree
            PARTITION BY (retentionClass, toYYYYMMDD(toDateTime(intDiv(receivedAt, 1000))))
            ORDER BY (kind, app, device, time, id, collector)
            """
        ]
        if let cluster {
            statements.append(
                """
                CREATE TABLE IF NOT EXISTS \(identifier: database).records AS \(identifier: database).records_local
                ENGINE = Distributed(\(identifier: cluster), \(identifier: database), records_local, cityHash64(app, device))
                """)
        }
        return statements
    }

    /// `incidents`: one row per diagnostic upload, keyed by its short id (re-sent rows fold).
    func incidentsTables() -> [ClickHouseSQL] {
        var statements: [ClickHouseSQL] = [
            """
            CREATE TABLE IF NOT EXISTS \(identifier: database).\(identifier: incidentsStorage) (
              id String,
              guid String,
              app String,
              device Nullable(String),
              session Nullable(String),
              identity Nullable(String),
              description Nullable(String),
              createdAt Int64,
              recordCount UInt32,
              firstTime Nullable(Int64),
              lastTime Nullable(Int64),
              collector UInt8
            ) ENGINE = ReplacingMergeTree
            PARTITION BY toYYYYMM(toDateTime(intDiv(createdAt, 1000)))
            ORDER BY id
            """
        ]
        if let cluster {
            statements.append(
                """
                CREATE TABLE IF NOT EXISTS \(identifier: database).incidents AS \(identifier: database).incidents_local
                ENGINE = Distributed(\(identifier: cluster), \(identifier: database), incidents_local, cityHash64(id))
                """)
        }
        return statements
    }
}

extension ClickHouseSchema {
    /// `event_ids`: the `eventId` of every shipped record that has one, keyed by the identity
    /// a retry repeats (kind, app, eventId), so that a collector can tell a client's retry
    /// from a new record before acknowledging it, whichever collector took the original
    /// (load balancers resend to another). A lookup reads a few granules of the primary key,
    /// whatever the size of `records`. `(id, collector)` names the row that holds the
    /// record. Re-sent rows fold (`ReplacingMergeTree`); readers need no `FINAL`, they only
    /// ask whether a key exists.
    /// - Granules of 256 rows, not 8,192: ids are random, so each id of a lookup reads one
    ///   granule per day partition; at 8,192 a request of 1,000 ids read every row of an app
    ///   with a million ids (measured on 18.16, see README), at 256 it reads at most
    ///   ids x 7 x 256 rows whatever the app's size.
    /// - Partitioned by day of receipt and dropped after ``SpoolRetryWindow`` by retention,
    ///   the window in which the embedded spool also recognises a retry.
    /// - With a cluster, sharded by the key itself, so a lookup's rows are on one shard per key.
    func eventIDsTables() -> [ClickHouseSQL] {
        var statements: [ClickHouseSQL] = [
            """
            CREATE TABLE IF NOT EXISTS \(identifier: database).\(identifier: eventIDsStorage) (
              kind Enum8('event' = 0, 'log' = 1),
              app String,
              eventId String,
              id Int64,
              collector UInt8,
              receivedAt Int64
            ) ENGINE = ReplacingMergeTree
            PARTITION BY toYYYYMMDD(toDateTime(intDiv(receivedAt, 1000)))
            ORDER BY (kind, app, eventId)
            SETTINGS index_granularity = 256
            """
        ]
        if let cluster {
            statements.append(
                """
                CREATE TABLE IF NOT EXISTS \(identifier: database).event_ids AS \(identifier: database).event_ids_local
                ENGINE = Distributed(\(identifier: cluster), \(identifier: database), event_ids_local, cityHash64(app, eventId))
                """)
        }
        return statements
    }
}

/// Why the schema could not be brought up to date.
public enum ClickHouseSchemaError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The database was migrated by a newer daemon: running would write rows the newer
    /// schema does not expect.
    case newerSchema(database: String, endpoint: String, found: Int, known: Int)

    /// 65 (`EX_DATAERR`), as for other stored data this daemon cannot use.
    public var exitCode: Int32 { 65 }

    public var description: String {
        switch self {
        case .newerSchema(let database, let endpoint, let found, let known):
            "ClickHouse database \(database) at \(endpoint) has schema version \(found), newer than \(known), the newest this daemon knows: upgrade the daemon"
        }
    }
}
