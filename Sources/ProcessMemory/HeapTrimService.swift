public import ServiceLifecycle

/// Trims the heaps (``HeapPolicy/trim()``) while the daemon runs: every `interval`, and at
/// once when the resident free memory has grown by ``HeapPolicy/freeGrowthBeforeTrim`` since
/// the last trim, so memory a burst (a bundle, a large query page, a compaction merge) freed
/// leaves the RSS within a quarter of a second under load too, instead of at the next
/// interval. When the daemon was idle for a whole interval (under 1% of a core), it also releases its cold code pages
/// (`ColdPages`), as it did once when it became ready; under load the code stays resident.
public struct HeapTrimService: Service {
    var interval: Duration = .seconds(10)
    /// How often the resident free memory is read (one small `/proc` read and `mallinfo2`),
    /// at most: see ``nextCheck(after:cost:ceiling:)``.
    var checkInterval: Duration = .milliseconds(250)
    /// The share of one core the reading may take: `mallinfo2` walks every free chunk of every
    /// arena, and after large query pages the heaps hold enough of them that a call took about
    /// 10 ms (a perf profile of ClickHouse-backed query pages put 6.8% of the daemon's CPU in it,
    /// at 4 calls a second; BENCHMARKS.md, issue 26's reads).
    static let checkShare = 0.005
    /// CPU time per interval below which the daemon counts as idle.
    var idleShare = 0.01

    public init() {}

    /// Whether to trim now: the interval passed, or the resident free memory grew by the
    /// growth step since the last trim left it (nil when it cannot be read: the interval
    /// alone decides). What a trim leaves is the floor: free chunks smaller than a page and
    /// stacks, which another trim would not return.
    static func trimDue(residentFreeBytes: Int64?, afterLastTrim: Int64?, sinceLastTrim: Duration, interval: Duration) -> Bool {
        if sinceLastTrim >= interval { return true }
        guard let residentFreeBytes, let afterLastTrim else { return false }
        return residentFreeBytes - afterLastTrim >= HeapPolicy.freeGrowthBeforeTrim
    }

    /// The wait before the next reading: `base`, or longer when the last reading cost more
    /// than ``checkShare`` of it, so the check costs at most that share of a core; never
    /// longer than `ceiling` (the trim interval), which the loop's interval trim needs.
    static func nextCheck(after base: Duration, cost: Duration, ceiling: Duration) -> Duration {
        min(max(base, cost / checkShare), max(base, ceiling))
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown { [interval, checkInterval, idleShare] in
            let clock = ContinuousClock()
            var trimmedAt = clock.now
            var afterLastTrim = HeapPolicy.residentFreeBytes()
            var windowStart = clock.now
            var cpuBefore = ProcessStat.cpuSeconds()
            var wait = checkInterval
            while !Task.isCancelled {
                try await Task.sleep(for: wait)
                let readingStart = clock.now
                let residentFree = HeapPolicy.residentFreeBytes()
                wait = Self.nextCheck(after: checkInterval, cost: clock.now - readingStart, ceiling: interval)
                if Self.trimDue(
                    residentFreeBytes: residentFree, afterLastTrim: afterLastTrim, sinceLastTrim: clock.now - trimmedAt,
                    interval: interval)
                {
                    HeapPolicy.trim()
                    trimmedAt = clock.now
                    afterLastTrim = HeapPolicy.residentFreeBytes()
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
