import Foundation
import Logging
import MetricsTestKit
import StoreCore
import Synchronization
import TelemetryModel
import Testing

@testable import TelemetryStore

/// The disk guard refuses ingest below the high-water mark and says so on `/metrics`; with
/// the filesystem and the metrics backend passed in, that is checked without filling a disk.
@Suite struct DiskGuardTests {
    /// Free space the test sets; total fixed.
    final class ScriptedSpace: FilesystemSpace {
        let free = Mutex<Int64?>(10_000)
        func usage(of directory: URL) -> FilesystemUsage? {
            free.withLock { $0 }.map { FilesystemUsage(freeBytes: $0, totalBytes: 100_000) }
        }
    }

    @Test func refusalStartsAndEndsWithTheMarkAndIsExported() throws {
        let space = ScriptedSpace()
        let metrics = TestMetrics()
        let transitions = Mutex<[DiskGuard.Transition]>([])
        let guardian = DiskGuard(
            directory: URL(fileURLWithPath: "/nonexistent"),
            configuration: { .init(minFreeBytes: 1_000, minFreeRatio: 0.002, keepFreeBytes: 0) }, space: space,
            metrics: metrics, logger: Logger(label: "t"), onTransition: { t in transitions.withLock { $0.append(t) } })
        #expect(guardian.refusal() == nil)
        #expect(try metrics.expectGauge(MetricName.diskFreeBytes.rawValue).lastValue == 10_000)
        #expect(try metrics.expectGauge(MetricName.diskHighWater.rawValue).lastValue == 0)

        space.free.withLock { $0 = 999 }
        #expect(guardian.check())
        let message = try #require(guardian.refusal())
        #expect(message.contains("disk.minFreeBytes=1000"))
        #expect(!message.contains("retention is deleting"), "keepFreeBytes=0 turns deleting for space off")
        #expect(try metrics.expectGauge(MetricName.diskHighWater.rawValue).lastValue == 1)
        #expect(try metrics.expectGauge(MetricName.diskFreeBytes.rawValue).lastValue == 999)
        #expect(!guardian.check(), "still refusing is no change")

        space.free.withLock { $0 = 1_000 }
        #expect(guardian.check())
        #expect(guardian.refusal() == nil)
        #expect(try metrics.expectGauge(MetricName.diskHighWater.rawValue).lastValue == 0)
        let seen = transitions.withLock { $0 }
        #expect(seen.count == 2)
        if case .refusing(let status, let highWater) = seen.first {
            #expect(status.freeBytes == 999 && highWater == 1_000)
        } else {
            Issue.record("first transition should be refusing: \(seen)")
        }
    }

    @Test func anUnreadableFilesystemChangesNothing() {
        let space = ScriptedSpace()
        let guardian = DiskGuard(
            directory: URL(fileURLWithPath: "/nonexistent"), configuration: { .init(minFreeBytes: 1_000) }, space: space,
            metrics: TestMetrics(), logger: Logger(label: "t"))
        space.free.withLock { $0 = nil }
        #expect(!guardian.check())
        #expect(guardian.refusal() == nil)
    }
}
