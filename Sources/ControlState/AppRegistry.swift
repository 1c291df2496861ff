import Foundation
internal import GRDB
import Synchronization
public import TelemetryModel

/// Per-app flags registered with the daemon (from `mamtelemetryctl apps import Info.plist`
/// or the config file). Ingest consults it for every record, so lookups read an in-memory
/// snapshot; writes go to `control.sqlite` first, so a registration survives restarts.
public final class AppRegistry: Sendable {
    public struct Entry: Sendable, Hashable, Codable {
        public var appId: String
        public var flags: AppFlags
        /// Where the flags came from (`plist`, `api`, `config`).
        public var source: String
        public var updatedAt: Int64
    }

    private let pool: DatabasePool
    private let stored = Mutex<[String: Entry]>([:])
    /// Entries from the config file: merged with stored ones, reloaded on SIGHUP.
    private let configured = Mutex<[String: AppFlags]>([:])

    public init(control: ControlDatabase) throws {
        let pool = control.pool
        self.pool = pool
        let entries = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM app").map { row in
                Entry(
                    appId: row["appId"],
                    flags: AppFlags(
                        telemetryDisabled: row["telemetryDisabled"], usePPE: row["usePPE"], verboseLogging: row["verboseLogging"]),
                    source: row["source"], updatedAt: row["updatedAt"])
            }
        }
        stored.withLock { s in for e in entries { s[e.appId] = e } }
    }

    /// The registry's combined view of one app (stored and configured, conservative merge).
    public func flags(for appId: String) -> AppFlags? {
        let s = stored.withLock { $0[appId]?.flags }
        let c = configured.withLock { $0[appId] }
        switch (s, c) {
        case (nil, nil): return nil
        case (let x?, nil), (nil, let x?): return x
        case (let x?, let y?): return x.merged(with: y)
        }
    }

    /// Registers (or replaces) an app's flags durably.
    public func register(appId: String, flags: AppFlags, source: String, now: Int64) async throws -> Entry {
        let entry = Entry(appId: appId, flags: flags, source: source, updatedAt: now)
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO app(appId, telemetryDisabled, usePPE, verboseLogging, source, updatedAt)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(appId) DO UPDATE SET telemetryDisabled = excluded.telemetryDisabled,
                      usePPE = excluded.usePPE, verboseLogging = excluded.verboseLogging,
                      source = excluded.source, updatedAt = excluded.updatedAt
                    """,
                arguments: [appId, flags.telemetryDisabled, flags.usePPE, flags.verboseLogging, source, now])
        }
        stored.withLock { $0[appId] = entry }
        return entry
    }

    public func remove(appId: String) async throws -> Bool {
        let removed = try await pool.write { db in
            try db.execute(sql: "DELETE FROM app WHERE appId = ?", arguments: [appId])
            return db.changesCount > 0
        }
        stored.withLock { _ = $0.removeValue(forKey: appId) }
        return removed
    }

    public func all() -> [Entry] {
        var out = stored.withLock { Array($0.values) }
        let conf = configured.withLock { $0 }
        for (appId, flags) in conf where !out.contains(where: { $0.appId == appId }) {
            out.append(Entry(appId: appId, flags: flags, source: "config", updatedAt: 0))
        }
        return out.sorted { $0.appId < $1.appId }
    }

    /// Replaces the config-file entries (start-up and SIGHUP).
    public func setConfigured(_ apps: [String: AppFlags]) {
        configured.withLock { $0 = apps }
    }
}
