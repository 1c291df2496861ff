public import Foundation
internal import GRDB
import StoreCore

/// `control.sqlite`: the daemon's own small, durable state (app registry, tokens, drop
/// counts), kept apart from the record stores so it is never subject to their retention.
/// One handle, shared by `AppRegistry`, `TokenStore` and `DropLedger`; the connection pool
/// inside it stays internal, so no caller (and no other backend) links the SQLite library
/// through this module's API.
public final class ControlDatabase: Sendable {
    let pool: DatabasePool

    private init(pool: DatabasePool) { self.pool = pool }

    /// The file under a data directory, for tools and tests that must read or change it the
    /// way another process would.
    public static func file(in directory: URL) -> URL { directory.appendingPathComponent("control.sqlite") }

    /// Opens (creating and migrating as needed) `control.sqlite` under `directory`.
    public static func open(directory: URL) throws -> ControlDatabase {
        try PrivateFiles.directory(directory, narrowing: false)
        var config = Configuration()
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        // As the record stores: another opener holding a lock for a moment (a predecessor
        // still closing) is waited for, not a failed start.
        config.busyMode = .timeout(10)
        let path = file(in: directory).path
        try PrivateFiles.database(path)
        let pool = try DatabasePool(path: path, configuration: config)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("apps-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE app (
                      appId TEXT PRIMARY KEY,
                      telemetryDisabled INTEGER,
                      usePPE INTEGER,
                      verboseLogging INTEGER,
                      source TEXT NOT NULL,
                      updatedAt INTEGER NOT NULL
                    )
                    """)
        }
        migrator.registerMigration("tokens-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE token (
                      id TEXT PRIMARY KEY,
                      name TEXT NOT NULL,
                      secretHash BLOB NOT NULL,
                      scopes TEXT NOT NULL,
                      apps TEXT NOT NULL,
                      createdAt INTEGER NOT NULL,
                      revoked INTEGER NOT NULL DEFAULT 0
                    )
                    """)
        }
        migrator.registerMigration("drops-v1") { db in
            // Hourly counts of records not stored, by outcome (dropped by policy or rejected
            // as invalid), reason, kind and app: they cannot be recomputed from the record
            // stores, which never saw them. `appId` is '' when the record named none.
            try db.execute(
                sql: """
                    CREATE TABLE drop_count (
                      hour INTEGER NOT NULL,
                      outcome TEXT NOT NULL,
                      reason TEXT NOT NULL,
                      kind TEXT NOT NULL,
                      appId TEXT NOT NULL,
                      count INTEGER NOT NULL,
                      PRIMARY KEY (hour, outcome, reason, kind, appId)
                    ) WITHOUT ROWID
                    """)
        }
        migrator.registerMigration("token-apps-v2") { db in
            // A token's app ids as rows: the comma-joined `apps` column could not hold an
            // empty id or one with a comma (`[""]` came back unbound, `["a,b"]` as two apps).
            // Existing rows are read the way the daemon always read them. The column is still
            // written (ids can no longer hold a comma or be empty, so it is exact) so that an
            // older daemon started on this file keeps every binding.
            try db.execute(
                sql: """
                    CREATE TABLE token_app (
                      tokenId TEXT NOT NULL REFERENCES token(id),
                      position INTEGER NOT NULL,
                      appId TEXT NOT NULL,
                      PRIMARY KEY (tokenId, position)
                    ) WITHOUT ROWID
                    """)
            for row in try Row.fetchAll(db, sql: "SELECT id, apps FROM token WHERE apps != ''") {
                let apps = (row["apps"] as String).split(separator: ",").map(String.init)
                for (position, app) in apps.enumerated() {
                    try db.execute(
                        sql: "INSERT INTO token_app(tokenId, position, appId) VALUES (?, ?, ?)",
                        arguments: [row["id"] as String, position, app])
                }
            }
        }
        try migrator.migrate(pool)
        return ControlDatabase(pool: pool)
    }
}
