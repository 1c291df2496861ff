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
    var count: Int { seen.count }

    init() {}

    /// The devices of `records`, received at `receivedAt`; records without a device are not indexed.
    init(_ records: some Sequence<DecodedRecord>, receivedAt: Int64) {
        for record in records where !record.keys.deviceId.isEmpty {
            add(Pair(app: record.keys.appId, device: record.keys.deviceId), receivedAt: receivedAt)
        }
    }

    /// One hash of the pair's strings (updated in place), not a lookup and a store.
    mutating func add(_ pair: Pair, receivedAt: Int64) {
        Self.widen(&seen[pair, default: (receivedAt, receivedAt)], first: receivedAt, last: receivedAt)
    }

    mutating func merge(_ other: DeviceSightings) {
        for (pair, times) in other.seen {
            Self.widen(&seen[pair, default: times], first: times.first, last: times.last)
        }
    }

    private static func widen(_ times: inout (first: Int64, last: Int64), first: Int64, last: Int64) {
        times.first = min(times.first, first)
        times.last = max(times.last, last)
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
    /// day is buffered for the index once an hour, not once per commit.
    func unknown(to cache: DeviceIndexCache) -> DeviceSightings {
        guard !seen.isEmpty else { return self }
        let keyed = seen.map { pair, times in (pair, times, DeviceIndexCache.key(pair), times.last / DeviceIndexCache.hour) }
        var fresh = DeviceSightings()
        cache.withKnown { known in
            for (pair, times, key, hour) in keyed where (known[key] ?? .min) < hour { fresh.seen[pair] = times }
        }
        return fresh
    }

    /// Upserts the pairs last seen at or after `since` into `device_index` (inside the
    /// caller's transaction).
    func apply(_ db: Database, since: Int64 = .min) throws {
        guard !seen.isEmpty else { return }
        let upsert = try BoundStatement(
            db,
            sql: """
                INSERT INTO device_index(device, app, deviceLower, firstSeen, lastSeen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(deviceLower, device, app) DO UPDATE SET
                  firstSeen = min(firstSeen, excluded.firstSeen), lastSeen = max(lastSeen, excluded.lastSeen)
                """)
        for (pair, times) in seen where times.last >= since {
            try upsert.run {
                $0.add(pair.device)
                $0.add(pair.app)
                $0.add(pair.device.lowercased())
                $0.add(times.first)
                $0.add(times.last)
            }
        }
    }
}

/// The (app, device) pairs this process put in the index or its buffer (DeviceIndexBuffer),
/// by hour of their last sighting, so requests and the writer skip pairs already there this
/// hour: a device that sends all day costs one upsert an hour, not one per commit.
///
/// Sized for a fleet, not for a sample: each upsert lands at a random page of the index, so a
/// cache smaller than the fleet's pairs writes nearly every record's pair again (with room for
/// 50,000 pairs, a fleet of 20,000 devices in 6 apps cost ingest 2.4x the CPU per record of a
/// build without the index; BENCHMARKS.md, "the device index cache"). A pair is kept as a
/// 64-bit hash of its two ids and an hour, about 20 bytes, so `capacity` (500,000 by default)
/// costs about 10 MB when full and nothing while a fleet is smaller. When full it first drops
/// the pairs not seen this hour (they would be written again anyway), and starts over only if
/// that frees nothing. Two pairs that share a hash would let one go unwritten for an hour;
/// at 500,000 pairs that chance is about 7e-9. Told only after a commit succeeded, so it never
/// claims a pair that was rolled back; a buffered pair counts as written, since a crash that
/// loses the buffer also loses the cache, and the next open reads the buffer back from the
/// batches.
final class DeviceIndexCache: Sendable {
    static let hour: Int64 = 3_600_000
    let capacity: Int
    private let known = Mutex<[Int: Int64]>([:])

    init(capacity: Int = 500_000) { self.capacity = capacity }

    /// The pair's key in the cache; `Hasher` is seeded once per process, which is all a
    /// process-local cache needs.
    static func key(_ pair: DeviceSightings.Pair) -> Int {
        var hasher = Hasher()
        hasher.combine(pair.app)
        hasher.combine(pair.device)
        return hasher.finalize()
    }

    func knows(_ pair: DeviceSightings.Pair, hour: Int64) -> Bool {
        let key = Self.key(pair)
        return known.withLock { ($0[key] ?? .min) >= hour }
    }

    /// Reads the hours by key under one lock (a whole group's pairs at once).
    func withKnown(_ body: ([Int: Int64]) -> Void) {
        known.withLock { body($0) }
    }

    /// How many pairs the cache holds.
    var count: Int { known.withLock { $0.count } }

    func remember(_ sightings: DeviceSightings) {
        guard !sightings.isEmpty else { return }
        let keyed = sightings.seen.map { pair, times in (Self.key(pair), times.last / Self.hour) }
        let newest = keyed.map(\.1).max() ?? .min
        known.withLock { known in
            if known.count + keyed.count > capacity { known = known.filter { $0.value >= newest } }
            if known.count + keyed.count > capacity { known.removeAll(keepingCapacity: true) }
            for (key, hour) in keyed { known[key] = max(known[key] ?? .min, hour) }
        }
    }
}
