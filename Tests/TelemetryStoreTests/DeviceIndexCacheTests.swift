import TestSupport
import Testing

@testable import TelemetryStore

/// The writer's memory of the (app, device) pairs it already put in the device index this
/// hour: it must hold a whole fleet (a cache smaller than the fleet writes nearly every pair
/// again, which cost ingest 2.4x its CPU per record), forget the past hours first when it is
/// full, and never claim a pair it was not told about.
@Suite struct DeviceIndexCacheTests {
    static let hour = DeviceIndexCache.hour

    /// `count` distinct generated pairs: GUID-like devices across a few apps.
    static func pairs(_ count: Int, seed: UInt64) -> [DeviceSightings.Pair] {
        var random = SeededRandom(seed: seed)
        var seen = Set<DeviceSightings.Pair>()
        var out: [DeviceSightings.Pair] = []
        while out.count < count {
            let pair = DeviceSightings.Pair(app: "com.contoso.app\(random.below(6))", device: DeviceIndexTests.guid(&random))
            if seen.insert(pair).inserted { out.append(pair) }
        }
        return out
    }

    static func sightings(_ pairs: some Sequence<DeviceSightings.Pair>, hour: Int64) -> DeviceSightings {
        var s = DeviceSightings()
        for p in pairs { s.add(p, receivedAt: hour * Self.hour + 1_000) }
        return s
    }

    @Test(arguments: 0..<2) func aFleetOfAHundredAndTwentyThousandPairsIsHeldWhole(seed: UInt64) {
        let cache = DeviceIndexCache()
        let fleet = Self.pairs(120_000, seed: seed)
        // Told commit by commit, as the writer tells it.
        for start in stride(from: 0, to: fleet.count, by: 4_000) {
            cache.remember(Self.sightings(fleet[start..<min(start + 4_000, fleet.count)], hour: 500_000))
        }
        #expect(cache.count == fleet.count)
        #expect(fleet.allSatisfy { cache.knows($0, hour: 500_000) })
        // The next hour every pair is written again (the index keeps last sightings to the hour).
        #expect(!fleet.contains { cache.knows($0, hour: 500_001) })
        // Pairs it was never told about are not claimed.
        #expect(!Self.pairs(5_000, seed: seed + 100).contains { cache.knows($0, hour: 500_000) })
    }

    @Test func whenFullThePastHoursGoFirst() {
        let cache = DeviceIndexCache(capacity: 1_000)
        let all = Self.pairs(1_300, seed: 7)
        let earlier = all[0..<800]
        let current = all[800..<1_300]
        cache.remember(Self.sightings(earlier, hour: 10))
        cache.remember(Self.sightings(current, hour: 11))
        #expect(cache.count == current.count)
        #expect(current.allSatisfy { cache.knows($0, hour: 11) })
        #expect(!earlier.contains { cache.knows($0, hour: 10) })
    }

    @Test func whenFullWithinOneHourItStartsOver() {
        let cache = DeviceIndexCache(capacity: 1_000)
        let all = Self.pairs(1_300, seed: 8)
        cache.remember(Self.sightings(all[0..<800], hour: 10))
        cache.remember(Self.sightings(all[800..<1_300], hour: 10))
        #expect(cache.count == 500)
        #expect(all[800..<1_300].allSatisfy { cache.knows($0, hour: 10) })
        // What it forgot costs an upsert, never a missed one: nothing is claimed wrongly.
        #expect(!all[0..<800].contains { cache.knows($0, hour: 10) })
    }
}
