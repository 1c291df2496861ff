import Foundation
internal import GRDB
public import Logging
public import ServiceLifecycle
import Synchronization
public import TelemetryModel

/// Whether a record was dropped by policy (opted out, duplicate) or rejected as invalid.
public enum DropOutcome: String, Sendable, Hashable, CaseIterable {
    case dropped
    case rejected
}

/// One row of drop counts: an hour, an outcome, a reason, a kind and an app.
public struct DropKey: Sendable, Hashable {
    /// Start of the hour (epoch milliseconds, UTC) the records arrived in.
    public var hour: Int64
    public var outcome: DropOutcome
    public var reason: String
    public var kind: RecordKind
    /// The app the records named; '' when they named none, ``DropLedger/otherApps`` past
    /// the per-hour app limit.
    public var appId: String

    public init(hour: Int64, outcome: DropOutcome, reason: String, kind: RecordKind, appId: String) {
        self.hour = hour
        self.outcome = outcome
        self.reason = reason
        self.kind = kind
        self.appId = appId
    }
}

/// Hourly counts of the records the daemon did not store, by reason, kind and app, kept in
/// `control.sqlite` so `/v1/stats/drops` covers history and survives restarts.
///
/// Counting stays off the ingest path: requests add to an in-memory tally, and the ledger
/// writes it in one transaction every `flushInterval` and at shutdown. A crash (SIGKILL,
/// power loss) loses at most the counts of that last interval — counts only, never a
/// record; answers read the tally too, so they are current while the daemon runs. App ids
/// come from clients, so each hour keeps at most `maxAppsPerHour` of them by name and
/// counts the rest under ``otherApps``; rows older than `keepDays` are deleted.
public final class DropLedger: Service, Sendable {
    /// The app id counts fall under once an hour already names `maxAppsPerHour` apps.
    public static let otherApps = "(other apps)"
    static let hourMs: Int64 = 3_600_000

    private struct Pending {
        var counts: [DropKey: Int] = [:]
        /// Apps named so far in each hour still pending or recently flushed.
        var appsByHour: [Int64: Set<String>] = [:]
    }

    private let pool: DatabasePool
    private let flushInterval: Duration
    private let maxAppsPerHour: Int
    private let keepDays: Int64
    private let logger: Logger
    private let clock: any WallClock
    private let pending = Mutex(Pending())

    public init(
        control: ControlDatabase, flushInterval: Duration = .seconds(5), maxAppsPerHour: Int = 1000, keepDays: Int64 = 400,
        logger: Logger, clock: any WallClock
    ) throws {
        let pool = control.pool
        self.pool = pool
        self.flushInterval = flushInterval
        self.maxAppsPerHour = maxAppsPerHour
        self.keepDays = keepDays
        self.logger = logger
        self.clock = clock
        let hour = Self.hour(of: clock.nowMilliseconds())
        let known = try pool.read { db in
            try String.fetchSet(db, sql: "SELECT DISTINCT appId FROM drop_count WHERE hour = ?", arguments: [hour])
        }
        pending.withLock { $0.appsByHour[hour] = known }
    }

    static func hour(of time: Int64) -> Int64 {
        time.flooredToMultiple(of: hourMs)
    }

    /// Adds counts per app for records received at `receivedAt`.
    public func add(_ outcome: DropOutcome, reason: String, kind: RecordKind, byApp: [String: Int], receivedAt: Int64) {
        let hour = Self.hour(of: receivedAt)
        pending.withLock { p in
            for (app, n) in byApp where n > 0 {
                var apps = p.appsByHour[hour, default: []]
                var named = app
                if !apps.contains(app) {
                    if apps.count < maxAppsPerHour {
                        apps.insert(app)
                        p.appsByHour[hour] = apps
                    } else {
                        named = Self.otherApps
                    }
                }
                p.counts[DropKey(hour: hour, outcome: outcome, reason: reason, kind: kind, appId: named), default: 0] += n
            }
        }
    }

    /// Counts of the hours overlapping `since...until` (the hour holding `since` included),
    /// optionally of one app: the stored rows plus what is not yet flushed.
    public func counts(since: Int64, until: Int64, app: String?) async throws -> [DropKey: Int] {
        let from = Self.hour(of: since)
        var out = try await pool.read { db in
            var sql = "SELECT hour, outcome, reason, kind, appId, count FROM drop_count WHERE hour >= ? AND hour <= ?"
            var arguments: StatementArguments = [from, until]
            if let app {
                sql += " AND appId = ?"
                arguments += [app]
            }
            var rows: [DropKey: Int] = [:]
            for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
                guard let outcome = DropOutcome(rawValue: row["outcome"]), let kind = RecordKind(rawValue: row["kind"]) else { continue }
                rows[DropKey(hour: row["hour"], outcome: outcome, reason: row["reason"], kind: kind, appId: row["appId"]), default: 0] +=
                    row["count"] as Int
            }
            return rows
        }
        let unflushed = pending.withLock { $0.counts }
        for (key, n) in unflushed where key.hour >= from && key.hour <= until && (app == nil || key.appId == app) {
            out[key, default: 0] += n
        }
        return out
    }

    /// Writes the pending counts in one transaction and deletes rows past `keepDays`.
    /// On failure the counts go back to the tally for the next attempt.
    public func flush() async throws {
        let taken = pending.withLock { p -> [DropKey: Int] in
            defer {
                p.counts = [:]
                // Only the current hour's app list still matters for the per-hour limit.
                let current = Self.hour(of: clock.nowMilliseconds())
                p.appsByHour = p.appsByHour.filter { $0.key >= current }
            }
            return p.counts
        }
        guard !taken.isEmpty else { return }
        let cutoff = clock.nowMilliseconds() - keepDays * 86_400_000
        do {
            try await pool.write { db in
                let upsert = try db.makeStatement(
                    sql: """
                        INSERT INTO drop_count(hour, outcome, reason, kind, appId, count) VALUES (?, ?, ?, ?, ?, ?)
                        ON CONFLICT(hour, outcome, reason, kind, appId) DO UPDATE SET count = count + excluded.count
                        """)
                for (key, n) in taken {
                    try upsert.execute(arguments: [key.hour, key.outcome.rawValue, key.reason, key.kind.rawValue, key.appId, n])
                }
                try db.execute(sql: "DELETE FROM drop_count WHERE hour < ?", arguments: [cutoff])
            }
        } catch {
            pending.withLock { p in
                for (key, n) in taken { p.counts[key, default: 0] += n }
            }
            throw error
        }
    }

    /// Flushes every `flushInterval`, and once more at shutdown (after the HTTP server has
    /// stopped taking requests, since services stop in reverse order).
    public func run() async throws {
        while !Task.isShuttingDownGracefully {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.flushInterval) }
            do {
                try await flush()
            } catch {
                logger.error("drop counts could not be written; they are kept for the next attempt", metadata: ["error": "\(error)"])
            }
        }
    }
}
