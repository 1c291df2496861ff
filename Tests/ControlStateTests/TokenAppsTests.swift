import Foundation
import GRDB
import Testing

@testable import ControlState

/// A token's app list is stored as a list and comes back exactly as created, after a reload
/// (what SIGHUP does) and after a restart. The comma-joined column it replaces turned
/// `"apps": [""]` into an unbound token after a reload and `["a,b"]` into two apps; ids the
/// daemon could not enforce exactly are now refused when the token is created.
@Suite struct TokenAppsTests {
    static func control() throws -> (URL, ControlDatabase) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)")
        return (dir, try ControlDatabase.open(directory: dir))
    }

    @Test func aListComesBackExactlyAfterAReloadAndARestart() async throws {
        let (dir, control) = try Self.control()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try TokenStore(control: control)
        let lists: [[String]] = [
            ["com.contoso.a"], ["com.contoso.b", "com.contoso.a"], ["com.contoso.a", "com.contoso.a", "com.contoso.c"], [],
            ["com.contoso.ü", "x"],
        ]
        var ids: [String: [String]] = [:]
        for apps in lists {
            let (token, _) = try await store.create(name: "t", scopes: [.read, .ingest], apps: apps, now: 0)
            var once: [String] = []
            for app in apps where !once.contains(app) { once.append(app) }
            #expect(token.apps == once)
            ids[token.id] = once
        }
        try store.reload()
        for (id, apps) in ids { #expect(store.token(id: id)?.apps == apps) }
        let restarted = try TokenStore(control: try ControlDatabase.open(directory: dir))
        for (id, apps) in ids {
            #expect(restarted.token(id: id)?.apps == apps)
            #expect(restarted.token(id: id)?.readableApps == (apps.isEmpty ? nil : Set(apps)))
        }
    }

    @Test func idsThatCannotBeEnforcedExactlyAreRefused() async throws {
        let (dir, control) = try Self.control()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try TokenStore(control: control)
        let refused: [([String], Set<Scope>, TokenAppsError)] = [
            ([""], [.read], .empty(index: 0)),
            (["com.a", "  "], [.ingest], .empty(index: 1)),
            (["com.a,com.b"], [.read], .comma(index: 0, id: "com.a,com.b")),
            (["com.a", ","], [.read], .comma(index: 1, id: ",")),
            ([" com.a"], [.read], .whitespace(index: 0, id: " com.a")),
            (["com.a\n"], [.read], .whitespace(index: 0, id: "com.a\n")),
            (["com.a"], [.admin], .adminBound),
        ]
        for (apps, scopes, expected) in refused {
            await #expect(throws: expected) { try await store.create(name: "t", scopes: scopes, apps: apps, now: 0) }
        }
        #expect(store.list().isEmpty, "a refused token was stored")
    }

    /// Rows a version before the list was stored as one comma-joined column are read as
    /// that version read them, so no token's binding changes across the upgrade.
    @Test func commaJoinedRowsAreMigrated() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let old = try DatabaseQueue(path: dir.appendingPathComponent("control.sqlite").path)
        try await old.write { db in
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('apps-v1'), ('tokens-v1'), ('drops-v1')")
            try db.execute(
                sql: """
                    CREATE TABLE token (id TEXT PRIMARY KEY, name TEXT NOT NULL, secretHash BLOB NOT NULL, scopes TEXT NOT NULL,
                      apps TEXT NOT NULL, createdAt INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0)
                    """)
            for (id, apps) in [("aaaa0001", "com.a,com.b"), ("aaaa0002", ""), ("aaaa0003", "com.c")] {
                try db.execute(
                    sql: "INSERT INTO token(id, name, secretHash, scopes, apps, createdAt) VALUES (?, 'old', x'00', 'ingest,read', ?, 0)",
                    arguments: [id, apps])
            }
        }
        try old.close()
        let store = try TokenStore(control: try ControlDatabase.open(directory: dir))
        #expect(store.token(id: "aaaa0001")?.apps == ["com.a", "com.b"])
        #expect(store.token(id: "aaaa0002")?.apps == [])
        #expect(store.token(id: "aaaa0003")?.apps == ["com.c"])
    }
}
