import Compression
import TelemetryModel
import Testing

@testable import TelemetryStore

/// The NDJSON page's second pass takes the keys its first pass decoded; the cache must hand
/// each block back once and stop keeping at its bound, so a page spanning a whole window
/// cannot hold every keys block of it in memory.
@Suite struct PageKeysCacheTests {
    static func block(records: Int, firstSeq: Int64) throws -> StoredBlock {
        let keys = (0..<records).map { RecordKeys(time: Int64($0), appId: "com.contoso.app", deviceId: "device-\($0 % 7)") }
        let blob = try Deflate.compress(KeysBlock.encode(keys), level: 6, format: .zlib)
        return try StoredBlock(keysBlob: blob, firstSeq: firstSeq, receivedAt: 0)
    }

    @Test func aKeptBlockIsTakenOnceWithItsKeys() throws {
        var cache = PageKeysCache()
        let block = try Self.block(records: 10, firstSeq: 100)
        cache.keep(block, firstSeq: 100)
        let first = cache.take(100)
        let again = cache.take(100)
        let other = cache.take(200)
        let taken = try #require(first)
        #expect(taken.keys == block.keys)
        #expect(taken.id(3) == 103)
        #expect(again == nil)
        #expect(other == nil)
    }

    @Test func blocksPastTheBoundAreNotKept() throws {
        var cache = PageKeysCache()
        let half = PageKeysCache.maxRecords / 2
        cache.keep(try Self.block(records: half, firstSeq: 1), firstSeq: 1)
        cache.keep(try Self.block(records: half, firstSeq: 1 + Int64(half)), firstSeq: 1 + Int64(half))
        cache.keep(try Self.block(records: 1, firstSeq: 1 + 2 * Int64(half)), firstSeq: 1 + 2 * Int64(half))
        let firstHalf = cache.take(1)
        let secondHalf = cache.take(1 + Int64(half))
        let pastBound = cache.take(1 + 2 * Int64(half))
        #expect(firstHalf?.keys.count == half)
        #expect(secondHalf?.keys.count == half)
        #expect(pastBound == nil)
    }
}
