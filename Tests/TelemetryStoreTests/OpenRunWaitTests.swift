import Foundation
import GRDB
import Metrics
import StoreCore
import TestSupport
import Testing

@testable import TelemetryModel
@testable import TelemetryStore

/// Steady load against the compactor on a clock the test moves: the newest run of batches
/// waits for company instead of being merged at once and merged again with the batches after
/// it, so every record is encoded into a segment once, and a run that stays short is still
/// merged once it has waited.
@Suite struct OpenRunWaitTests {
    /// Records the compactor encoded over a steady stream of small batches, against the
    /// records the segments hold at the end, for a policy waiting `wait` seconds.
    static func steadyLoad(wait: Int64) async throws -> (encoded: Int, inSegments: Int, batchesLeft: Int) {
        let clock = ManualClock(wallMilliseconds: 1_800_000_000_000)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("open-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let policy = CompactionPolicy(maxRecords: 1_000, minimumAgeSeconds: 5, openRunWaitSeconds: wait)
        let store = try SQLiteRecordStore(
            directory: directory, configuration: StoreConfiguration(compaction: policy), clock: clock,
            metrics: NOOPMetricsHandler.instance)
        let committer = store.committer
        let task = Task { try await committer.run() }
        defer { task.cancel() }
        var encoded = 0
        var n = 0
        // 40 passes two seconds apart, 150 records a second: each pass finds 300 records
        // newly old enough, less than a segment's 1,000.
        for _ in 0..<40 {
            for _ in 0..<2 {
                let now = clock.nowMilliseconds()
                let records = (0..<150).map { i in CompactionTests.log(n + i, device: "d\(i % 9)", time: now) }
                n += records.count
                _ = try await store.append(records, kind: .log, env: .prod, receivedAt: now, incident: nil)
                clock.advance(.seconds(1))
            }
            encoded += try await store.compactor.compactOnce().records
        }
        // The load stops; once the newest batches have waited, they are merged too.
        clock.advance(.seconds(wait + 10))
        encoded += try await store.compactor.compactOnce().records
        await committer.close()
        let counts = try await DatabaseQueue(path: directory.appendingPathComponent("prod/records.sqlite").path).read { db in
            (
                try Int.fetchOne(db, sql: "SELECT coalesce(sum(count), 0) FROM batch WHERE substr(keys, 1, 1) IN (x'01', x'02')") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM batch WHERE substr(keys, 1, 1) NOT IN (x'01', x'02')") ?? 0
            )
        }
        #expect(n == 12_000)
        return (encoded, counts.0, counts.1)
    }

    @Test func aSteadyStreamIsEncodedIntoSegmentsOnce() async throws {
        let waiting = try await Self.steadyLoad(wait: 30)
        #expect(waiting.inSegments == 12_000 && waiting.batchesLeft == 0, "\(waiting)")
        #expect(waiting.encoded == waiting.inSegments, "records encoded \(waiting.encoded) for \(waiting.inSegments) in segments")

        // Without the wait (the policy before), each pass merged its partial segment again.
        let eager = try await Self.steadyLoad(wait: 0)
        #expect(eager.inSegments == 12_000 && eager.batchesLeft == 0, "\(eager)")
        #expect(eager.encoded > eager.inSegments * 3 / 2, "records encoded \(eager.encoded) for \(eager.inSegments) in segments")
    }
}
