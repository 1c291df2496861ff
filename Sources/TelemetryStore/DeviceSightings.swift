import Foundation
import GRDB
import Synchronization
import TelemetryModel

/// The (app, device) pairs a set of stored records came from, with the first and last receive
/// time of each: what the `device_index` table learns from a commit. The index is what makes
/// a device lookup (case-insensitive, by prefix, near matches) cheap on a big store: one
/// B-tree search instead of a scan of the records.
struct DeviceSightings: Sendable {
    struct Pair: Hashable, Sendable {
        var app: String
        var device: String
    }

    private(set) var seen: [Pair: (first: Int64, last: Int64)] = [:]

    var isEmpty: Bool { seen.isEmpty }

    init() {}

    /// The devices of `records`, received at `receivedAt`; records without a device are not indexed.
    init(_ records: some Sequence<DecodedRecord>, receivedAt: Int64) {
        for record in records where !record.keys.deviceId.isEmpty {
            add(Pair(app: record.keys.appId, device: record.keys.deviceId), receivedAt: receivedAt)
        }
    }

    mutating func add(_ pair: Pair, receivedAt: Int64) {
        let s = seen[pair]
        seen[pair] = (min(s?.first ?? receivedAt, receivedAt), max(s?.last ?? receivedAt, receivedAt))
    }

    mutating func merge(_ other: DeviceSightings) {
        for (pair, times) in other.seen {
            add(pair, receivedAt: times.first)
            add(pair, receivedAt: times.last)
        }
    }

    /// Adds the devices of every stored batch `sql` selects (columns `receivedAt`, `keys`).
    mutating func addBatches(_ db: Database, sql: String, arguments: StatementArguments = []) throws {
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            let block = try StoredBlock(keysBlob: [UInt8](row["keys"] as Data), firstSeq: 0, receivedAt: row["receivedAt"])
            for (i, k) in block.keys.enumerated() where !k.deviceId.isEmpty {
                add(Pair(app: k.appId, device: k.deviceId), receivedAt: block.receivedAt(i))
            }
        }
    }

    /// The sightings `cache` does not already hold for the same hour: a device that sends all
    /// day is written to the index once an hour, not once per commit.
    func unknown(to cache: DeviceIndexCache) -> DeviceSightings {
        var fresh = DeviceSightings()
        fresh.seen = seen.filter { pair, times in !cache.knows(pair, hour: times.last / DeviceIndexCache.hour) }
        return fresh
    }

    /// Upserts the pairs into `device_index` (inside the caller's transaction).
    func apply(_ db: Database) throws {
        guard !seen.isEmpty else { return }
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO device_index(device, app, deviceLower, firstSeen, lastSeen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(deviceLower, device, app) DO UPDATE SET
                  firstSeen = min(firstSeen, excluded.firstSeen), lastSeen = max(lastSeen, excluded.lastSeen)
                """)
        for (pair, times) in seen {
            try upsert.execute(arguments: [pair.device, pair.app, pair.device.lowercased(), times.first, times.last])
        }
    }
}

/// The (app, device) pairs this process wrote to the index, by hour of their last sighting,
/// so the writer skips pairs it already wrote this hour. Bounded: past `capacity` pairs it
/// starts over (which costs only repeated upserts). Told only after a commit succeeded, so it
/// never claims a write that was rolled back.
final class DeviceIndexCache: Sendable {
    static let hour: Int64 = 3_600_000
    let capacity: Int
    private let known = Mutex<[DeviceSightings.Pair: Int64]>([:])

    init(capacity: Int = 50_000) { self.capacity = capacity }

    func knows(_ pair: DeviceSightings.Pair, hour: Int64) -> Bool {
        known.withLock { ($0[pair] ?? .min) >= hour }
    }

    func remember(_ sightings: DeviceSightings) {
        known.withLock { known in
            if known.count + sightings.seen.count > capacity { known.removeAll(keepingCapacity: true) }
            for (pair, times) in sightings.seen { known[pair] = max(known[pair] ?? .min, times.last / Self.hour) }
        }
    }
}
