import Foundation
import GRDB
import StoreCore
import TelemetryModel

/// One environment's device index (app, device, identity, hour), written from the commits'
/// sightings (DeviceIndexBuffer) and read by device lookups: an answer in a handful of B-tree searches, whatever the store's
/// size. Retention and the spool prune it with their batches.
struct DeviceIndex: Sendable {
    let pool: DatabasePool
    /// The sightings of recent commits not written to the index yet.
    let buffer: DeviceIndexBuffer

    /// Looks `lookup.text` up in the device index: a handful of B-tree searches whatever the
    /// store's size (see ``DeviceLookupResult`` for what each part means). Writes the
    /// buffered sightings first, so every record acknowledged before the lookup counts; when
    /// that write fails (a full disk) the lookup still answers, from the index as written,
    /// and the next commit that is due or the next open writes the buffer.
    func find(_ lookup: DeviceLookup) async throws -> DeviceLookupResult {
        try? await buffer.flush(pool)
        return try await pool.read { db in try Self.find(lookup, db: db) }
    }

    /// The index's table: one row per (app, device), ordered by the lower-cased device id
    /// (case-insensitive, prefix and nearest-id lookups walk it in that order), then the id
    /// as sent and the app, which make the row unique.
    static func oneTreeSchema(named table: String) -> String {
        """
        CREATE TABLE \(table) (
          deviceLower TEXT NOT NULL,
          device TEXT NOT NULL,
          app TEXT NOT NULL,
          firstSeen INTEGER NOT NULL,
          lastSeen INTEGER NOT NULL,
          PRIMARY KEY (deviceLower, device, app)
        ) WITHOUT ROWID
        """
    }

    /// Index rows scanned past the prefix's first row at most, when an app filter skips rows.
    static let lookupScanBound = 10_000

    static func find(_ l: DeviceLookup, db: Database) throws -> DeviceLookupResult {
        typealias Row4 = (device: String, app: String, first: Int64, last: Int64)
        let lower = l.text.lowercased()
        let limit = max(l.limit, 1)
        func rows(_ sql: String, _ arguments: StatementArguments, take: (Row4) -> Bool) throws -> [Row4] {
            var out: [Row4] = []
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            var scanned = 0
            while let row = try cursor.next(), scanned < lookupScanBound {
                scanned += 1
                let r: Row4 = (row["device"], row["app"], row["firstSeen"], row["lastSeen"])
                if let app = l.app, r.app != app { continue }
                if let apps = l.apps, !apps.contains(r.app) { continue }
                guard take(r) else { break }
                out.append(r)
            }
            return out
        }
        let columns = "SELECT device, app, firstSeen, lastSeen FROM device_index"
        let exact = DeviceLookupResult.fold(
            try rows("\(columns) WHERE deviceLower = ? AND device = ? ORDER BY app", [lower, l.text]) { _ in true }
        ).first

        var devices = Set<String>()
        let matching: [Row4]
        if lower.count >= DeviceLookupResult.minimumPrefix {
            matching = try rows("\(columns) WHERE deviceLower >= ? ORDER BY deviceLower, device, app", [lower]) { r in
                guard r.device.lowercased().hasPrefix(lower) else { return false }
                devices.insert(r.device)
                return devices.count <= limit + 1
            }
        } else {
            matching = try rows("\(columns) WHERE deviceLower = ? ORDER BY device, app", [lower]) { _ in true }
        }
        var result = DeviceLookupResult(exact: exact, matches: Array(DeviceLookupResult.fold(matching).prefix(limit + 1)))
        guard result.exact == nil, result.matches.isEmpty else { return result }

        // Nothing under that text: its neighbours in sorted order share the longest prefixes.
        var count = 0
        let before = try rows("\(columns) WHERE deviceLower < ? ORDER BY deviceLower DESC, device DESC, app DESC", [lower]) { _ in
            count += 1
            return count <= 4 * limit
        }
        count = 0
        let after = try rows("\(columns) WHERE deviceLower > ? ORDER BY deviceLower, device, app", [lower]) { _ in
            count += 1
            return count <= 4 * limit
        }
        let candidates = DeviceLookupResult.fold(before.reversed()) + DeviceLookupResult.fold(after)
        result.near = DeviceLookupResult.rankNear(candidates, to: l.text, limit: min(limit, 5))
        return result
    }

    /// The devices whose records name `user` (an identity lower-cased, or a pseudonym)
    /// between `since` and `until` (device time, inclusive), both kinds, at most `limit`: the
    /// devices a user used in a window. Reads keys blocks only: for an identity, of the
    /// batches whose Bloom filter may hold it; a pseudonym names no stored value, so every
    /// batch of the window is read and each identity met is pseudonymised once.
    func devices(usedBy user: IdentitySelector, apps: Set<String>?, since: Int64?, until: Int64?, limit: Int) async throws -> [String] {
        try await pool.read { db in
            var sql = "SELECT receivedAt, bloom, keys, firstSeq FROM batch WHERE 1"
            var arguments: [any DatabaseValueConvertible] = []
            if let since {
                sql += " AND maxTime >= ?"
                arguments.append(since)
            }
            if let until {
                sql += " AND minTime <= ?"
                arguments.append(until)
            }
            sql += " ORDER BY firstSeq DESC"
            var found: [String] = []
            var seen = Set<String>()
            let term = user.bloomTerm
            let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
            while let row = try rows.next() {
                if let term, !BloomFilter(bytes: [UInt8](row["bloom"] as Data)).mightContain(term) { continue }
                let block = try StoredBlock(
                    keysBlob: [UInt8](row["keys"] as Data), firstSeq: row["firstSeq"], receivedAt: row["receivedAt"])
                for k in block.keys where !k.deviceId.isEmpty && !k.identity.isEmpty {
                    if let apps, !apps.contains(k.appId) { continue }
                    if let since, k.time < since { continue }
                    if let until, k.time > until { continue }
                    guard !seen.contains(k.deviceId), user.matches(k.identity) else { continue }
                    seen.insert(k.deviceId)
                    found.append(k.deviceId)
                    if found.count >= limit { return found }
                }
            }
            return found
        }
    }

    /// Recomputes the device index from every stored batch (the migration that adds it).
    static func rebuild(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM device_index")
        var after: Int64 = -1
        while true {
            let last = try Int64.fetchOne(
                db, sql: "SELECT max(id) FROM (SELECT id FROM batch WHERE id > ? ORDER BY id LIMIT 256)", arguments: [after])
            guard let last else { break }
            var sightings = DeviceSightings()
            try sightings.addBatches(db, sql: "SELECT receivedAt, keys FROM batch WHERE id > ? AND id <= ?", arguments: [after, last])
            try sightings.apply(db)
            after = last
        }
    }

    /// Deletes index rows of devices none of whose records is still stored: last seen before
    /// the oldest stored batch was received, less two hours (a compacted segment carries its
    /// newest batch's receive time and spans at most an hour; the index is kept to the hour).
    static func prune(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM device_index WHERE lastSeen < ?", arguments: [try pruneHorizon(db)])
    }

    /// The last-seen time below which a row has no stored record left (everything when no
    /// batch is stored). Buffered sightings older than it are not written (DeviceIndexBuffer).
    static func pruneHorizon(_ db: Database) throws -> Int64 {
        guard let oldest = try Int64.fetchOne(db, sql: "SELECT min(receivedAt) FROM batch") else { return .max }
        return oldest - 2 * 3_600_000
    }
}
