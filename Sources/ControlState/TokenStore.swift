import Crypto
import Foundation
internal import GRDB
import Synchronization

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
    private let watchers = Mutex<[Int: AsyncStream<Void>.Continuation]>([:])
    private let nextWatcher = Atomic<Int>(0)

    public init(control: ControlDatabase) throws {
        self.pool = control.pool
        try reload()
    }

    /// Re-reads the tables (start-up and SIGHUP, so tokens created by another process count).
    /// A token's app list comes back exactly as it was created.
    public func reload() throws {
        let (rows, appRows) = try pool.read { db in
            (
                try Row.fetchAll(db, sql: "SELECT * FROM token"),
                try Row.fetchAll(db, sql: "SELECT tokenId, appId FROM token_app ORDER BY tokenId, position")
            )
        }
        var apps: [String: [String]] = [:]
        for row in appRows { apps[row["tokenId"], default: []].append(row["appId"]) }
        var map: [String: Row_] = [:]
        for row in rows {
            let token = Token(
                id: row["id"], name: row["name"],
                scopes: Set((row["scopes"] as String).split(separator: ",").compactMap { Scope(rawValue: String($0)) }),
                apps: apps[row["id"]] ?? [], createdAt: row["createdAt"], revoked: row["revoked"])
            map[token.id] = Row_(token: token, hash: [UInt8](row["secretHash"] as Data))
        }
        byID.withLock { $0 = map }
        announceChange()
    }

    /// Told whenever a token may have changed: one was revoked, or the tables were re-read
    /// (SIGHUP). A stream opened with a token (`follow=true`) re-checks it on each notice, so
    /// a revocation ends it at once instead of at its next record. Newest-only: a notice
    /// means "look again", however many there were.
    public func changes() -> AsyncStream<Void> {
        let id = nextWatcher.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in
            _ = self?.watchers.withLock { $0.removeValue(forKey: id) }
        }
        watchers.withLock { $0[id] = continuation }
        return stream
    }

    /// How many streams are waiting for change notices (for tests that must know a stream
    /// is listening before they change a token).
    public var watcherCount: Int { watchers.withLock { $0.count } }

    /// The token with `id` as the daemon knows it now (revoked ones included), or nil.
    public func token(id: String) -> Token? { byID.withLock { $0[id]?.token } }

    private func announceChange() {
        for c in watchers.withLock({ Array($0.values) }) { c.yield() }
    }

    public var isEmpty: Bool { byID.withLock { $0.isEmpty } }

    /// Creates a token; the returned secret is shown once and never stored. Refuses an app
    /// list it could not enforce exactly (`TokenAppsError`); repeated ids count once.
    public func create(name: String, scopes: Set<Scope>, apps: [String], now: Int64) async throws -> (Token, secret: String) {
        let apps = try TokenAppsError.check(apps, scopes: scopes)
        let id = Self.randomHex(4)
        let secretPart = Self.randomHex(24)
        let token = Token(id: id, name: name, scopes: scopes, apps: apps, createdAt: now, revoked: false)
        let hash = Array(SHA256.hash(data: Data(secretPart.utf8)))
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO token(id, name, secretHash, scopes, apps, createdAt) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [id, name, Data(hash), scopes.map(\.rawValue).sorted().joined(separator: ","), apps.joined(separator: ","), now])
            for (position, app) in apps.enumerated() {
                try db.execute(
                    sql: "INSERT INTO token_app(tokenId, position, appId) VALUES (?, ?, ?)", arguments: [id, position, app])
            }
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
        announceChange()
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
