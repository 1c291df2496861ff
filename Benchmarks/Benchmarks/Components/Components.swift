import Benchmark
import Foundation
import HotPaths

/// Throughput and mallocs of each hot path (`swift package benchmark` in Benchmarks/). Every
/// operation is one request's 1,000 events (`HotPath` says what each step does), so records/s
/// is the throughput × 1,000. The same steps run under callgrind via `hotpath-count`.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 3, maxDuration: .seconds(3), maxIterations: 2_000)

    for path in HotPath.allCases {
        let prepared = PreparedStep()
        Benchmark(
            path.rawValue,
            closure: { benchmark in
                guard let step = prepared.step else { return }
                for _ in benchmark.scaledIterations {
                    let handled = try await step.run()
                    guard handled == step.expectedRecords else {
                        throw HotPathMismatch(path: path, handled: handled, expected: step.expectedRecords)
                    }
                    blackHole(handled)
                }
            },
            setup: {
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "components-\(path.rawValue)-\(getpid())")
                prepared.directory = directory
                prepared.step = try await path.prepare(in: directory)
            },
            teardown: {
                await prepared.step?.finish()
                prepared.step = nil
                if let directory = prepared.directory { try? FileManager.default.removeItem(at: directory) }
            })
    }
}

/// What a benchmark's setup prepared, handed to its closure and teardown. The framework
/// runs setup, the iterations and teardown one after another, never at once, which is why
/// the unchecked `Sendable` is safe here.
final class PreparedStep: @unchecked Sendable {
    var step: (any PreparedHotPath)?
    var directory: URL?
}
