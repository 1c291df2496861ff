import Crypto
import Foundation
import GRDB
import Synchronization

/// What a bearer token may do. `admin` implies every other scope.
public enum Scope: String, Sendable, Hashable, CaseIterable, Codable {
    case ingest, read, bundle, pii, admin
}

/// A token as the daemon knows it: never the secret, only its SHA-256.
public struct Token: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var scopes: Set<Scope>
    /// For ingest tokens: the app ids it may post for (empty: any app).
    public var apps: [String]
    public var createdAt: Int64
    public var revoked: Bool

    public init(id: String, name: String, scopes: Set<Scope>, apps: [String], createdAt: Int64, revoked: Bool) {
        self.id = id
        self.name = name
        self.scopes = scopes
        self.apps = apps
        self.createdAt = createdAt
        self.revoked = revoked
    }

    public func allows(_ scope: Scope) -> Bool { !revoked && (scopes.contains(scope) || scopes.contains(.admin)) }

    /// App ids compare byte for byte: no case folding or Unicode equivalence, so a bound
    /// token can only ever store records under exactly the ids it was given.
    public func mayPost(forApp appId: String) -> Bool {
        apps.isEmpty || scopes.contains(.admin) || apps.contains { $0.utf8.elementsEqual(appId.utf8) }
    }
}

/// Issues, checks and revokes bearer tokens, persisted in `control.sqlite`. A token reads
/// `mamt_<id>_<secret>`: the id finds the row, the secret is compared by its hash in
/// constant time, so neither a stolen database nor response timing gives a secret away.
public final class TokenStore: Sendable {
    private let pool: DatabasePool
    private struct Row_: Sendable {
        var token: Token
        var hash: [UInt8]
    }
    private let byID = Mutex<[String: Row_]>([:])

    public init(pool: DatabasePool) throws {
        self.pool = pool
        try reload()
    }

    /// Re-reads the table (start-up and SIGHUP, so tokens created by another process count).
    public func reload() throws {
        let rows = try pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM token") }
        var map: [String: Row_] = [:]
        for row in rows {
            let token = Token(
                id: row["id"], name: row["name"],
                scopes: Set((row["scopes"] as String).split(separator: ",").compactMap { Scope(rawValue: String($0)) }),
                apps: (row["apps"] as String).split(separator: ",").map(String.init), createdAt: row["createdAt"],
                revoked: row["revoked"])
            map[token.id] = Row_(token: token, hash: [UInt8](row["secretHash"] as Data))
        }
        byID.withLock { $0 = map }
    }

    public var isEmpty: Bool { byID.withLock { $0.isEmpty } }

    /// Creates a token; the returned secret is shown once and never stored.
    public func create(name: String, scopes: Set<Scope>, apps: [String], now: Int64) async throws -> (Token, secret: String) {
        let id = Self.randomHex(4)
        let secretPart = Self.randomHex(24)
        let token = Token(id: id, name: name, scopes: scopes, apps: apps, createdAt: now, revoked: false)
        let hash = Array(SHA256.hash(data: Data(secretPart.utf8)))
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO token(id, name, secretHash, scopes, apps, createdAt) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [id, name, Data(hash), scopes.map(\.rawValue).sorted().joined(separator: ","), apps.joined(separator: ","), now])
        }
        byID.withLock { $0[id] = Row_(token: token, hash: hash) }
        return (token, "mamt_\(id)_\(secretPart)")
    }

    public func revoke(id: String) async throws -> Bool {
        let changed = try await pool.write { db in
            try db.execute(sql: "UPDATE token SET revoked = 1 WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
        byID.withLock { $0[id]?.token.revoked = true }
        return changed
    }

    public func list() -> [Token] { byID.withLock { $0.values.map(\.token) }.sorted { $0.createdAt < $1.createdAt } }

    /// The token a presented secret belongs to, or nil. Constant-time on the secret.
    public func authenticate(_ presented: String) -> Token? {
        let parts = presented.split(separator: "_", maxSplits: 2)
        guard parts.count == 3, parts[0] == "mamt" else { return nil }
        guard let row = byID.withLock({ $0[String(parts[1])] }) else { return nil }
        let hash = Array(SHA256.hash(data: Data(parts[2].utf8)))
        var diff: UInt8 = 0
        for (a, b) in zip(hash, row.hash) { diff |= a ^ b }
        guard diff == 0, hash.count == row.hash.count, !row.token.revoked else { return nil }
        return row.token
    }

    static func randomHex(_ bytes: Int) -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &g)) }.joined()
    }
}
