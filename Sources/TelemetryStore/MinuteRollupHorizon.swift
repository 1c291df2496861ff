import GRDB
import StoreCore
import TelemetryModel

/// The first minute from which the minute rollups are complete: every stored event of that
/// minute or a later one is counted in them. Kept in `meta` and only ever moved forward (by an
/// expiry pass), so a read that trusts the minutes from here on never meets one whose rows
/// were deleted, and a late event for an expired minute (not written, see
/// ``EventRollupDelta/apply(_:)``) never leaves a partial row where a read would use it.
enum MinuteRollupHorizon {
    static let key = "minuteRollupsFrom"

    static func read(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) ?? .max
    }

    static func write(_ minute: Int64, db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", arguments: [key, minute])
    }

    /// Moves the horizon to the minute ``EventRollupScope/minutesKeptMs`` before `nowMs` (when
    /// that is later) and deletes the minute rows before it. Returns the rows deleted.
    static func advance(nowMs: Int64, db: Database) throws -> Int {
        let target = EventRollupScope.minute(of: nowMs.saturatingSubtracting(EventRollupScope.minutesKeptMs))
        guard target > (try read(db)) else { return 0 }
        try write(target, db: db)
        var removed = 0
        for table in [RollupTables.minutes.counts, RollupTables.minutes.latencies] {
            try db.execute(sql: "DELETE FROM \(table) WHERE minute < ?", arguments: [target])
            removed += db.changesCount
        }
        return removed
    }
}
