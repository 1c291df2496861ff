public import ServiceLifecycle

/// Trims the heaps (``HeapPolicy/trim()``) while the daemon runs: every `interval`, and at
/// once when the anonymous RSS has grown by ``HeapPolicy/growthBeforeTrim`` since the last
/// trim, so memory a burst (a bundle, a large query page, a compaction merge) freed leaves the
/// RSS within a second under load too, instead of at the next interval. When the daemon was
/// idle for a whole interval (under 1% of a core), it also releases its cold code pages
/// (`ColdPages`), as it did once when it became ready; under load the code stays resident.
public struct HeapTrimService: Service {
    var interval: Duration = .seconds(10)
    /// How often the anonymous RSS is read (one small `/proc` read).
    var checkInterval: Duration = .seconds(1)
    /// CPU time per interval below which the daemon counts as idle.
    var idleShare = 0.01

    public init() {}

    /// Whether to trim now: the interval passed, or the anonymous RSS grew by the growth
    /// step since the last trim (nil when it cannot be read: the interval alone decides).
    static func trimDue(anonymousBytes: Int64?, afterLastTrim: Int64?, sinceLastTrim: Duration, interval: Duration) -> Bool {
        if sinceLastTrim >= interval { return true }
        guard let anonymousBytes, let afterLastTrim else { return false }
        return anonymousBytes - afterLastTrim >= HeapPolicy.growthBeforeTrim
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown { [interval, checkInterval, idleShare] in
            let clock = ContinuousClock()
            var trimmedAt = clock.now
            var afterLastTrim = ProcessStat.anonymousBytes()
            var windowStart = clock.now
            var cpuBefore = ProcessStat.cpuSeconds()
            while !Task.isCancelled {
                try await Task.sleep(for: checkInterval)
                if Self.trimDue(
                    anonymousBytes: ProcessStat.anonymousBytes(), afterLastTrim: afterLastTrim, sinceLastTrim: clock.now - trimmedAt,
                    interval: interval)
                {
                    HeapPolicy.trim()
                    trimmedAt = clock.now
                    afterLastTrim = ProcessStat.anonymousBytes()
                }
                guard clock.now - windowStart >= interval else { continue }
                let cpu = ProcessStat.cpuSeconds()
                let window = clock.now - windowStart
                if let cpuBefore, let cpu, cpu - cpuBefore < idleShare * Double(window.components.seconds) { ColdPages.release() }
                cpuBefore = cpu
                windowStart = clock.now
            }
        }
    }
}
