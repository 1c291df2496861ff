import Foundation
import GRDB

/// `control.sqlite`: the daemon's own small, durable state (app registry, tokens), kept
/// apart from the record stores so it is never subject to their retention. One pool, shared
/// by `AppRegistry` and `TokenStore`.
public enum ControlDatabase {
    public static func open(directory: URL) throws -> DatabasePool {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = Configuration()
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let pool = try DatabasePool(path: directory.appendingPathComponent("control.sqlite").path, configuration: config)
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
        try migrator.migrate(pool)
        return pool
    }
}
