import CMalloc
import Foundation
import ServiceLifecycle

/// How the daemon uses glibc's heap. Two things pull against each other: large buffers
/// (inflated segments, request bodies, response chunks) should be reused from the heap
/// rather than mapped and faulted in page by page each time, and memory freed after a burst
/// should leave the RSS an operator sizes `MemoryMax=` by.
///
/// So large buffers come from the heap (mmap threshold 32 MiB) and the heap keeps up to
/// 64 MiB free at its top (trim threshold) while the daemon works; `HeapTrimService` returns
/// what is free every 10 s. Measured (BENCHMARKS.md): with glibc's adaptive thresholds a
/// query page re-faulted every segment buffer (page faults were 15% of the daemon's CPU in a
/// scan), and setting these cut the daemon's CPU per scan by about a sixth. Setting either
/// threshold alone is worse than neither: glibc then stops adapting the other (a 128 KiB
/// mmap threshold with a high trim threshold cost a third of the scan rate), and a low pair
/// (256 KiB / 1 MiB, tried before) cost queries ~20%. The arena count stays glibc's:
/// capping it at 2 cost ingest a fifth.
enum HeapPolicy {
    static let mmapThreshold: Int32 = 32 << 20
    static let trimThreshold: Int32 = 64 << 20

    /// Sets the thresholds; called once at start, before the services allocate. A setting the
    /// operator gave glibc itself (`GLIBC_TUNABLES=glibc.malloc.trim_threshold=...`) is left
    /// as given.
    static func configure(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        if !tunables.contains("glibc.malloc.mmap_threshold") { _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold) }
        if !tunables.contains("glibc.malloc.trim_threshold") { _ = mallopt(M_TRIM_THRESHOLD, trimThreshold) }
    }

    /// Returns free pages inside the heaps, which glibc's own top-of-heap trim cannot reach,
    /// to the system; a few milliseconds over all arenas.
    static func trim() {
        _ = malloc_trim(0)
    }
}

/// Trims the heaps every `interval` while the daemon runs, so memory freed after a burst of
/// load leaves the RSS within seconds instead of staying until the next burst reuses it; and
/// when the daemon was idle for the whole interval (under 1% of a core), releases its cold code
/// pages (`ColdPages`), as it did once when it became ready. Under load the code stays resident.
struct HeapTrimService: Service {
    var interval: Duration = .seconds(10)
    /// CPU time per interval below which the daemon counts as idle.
    var idleShare = 0.01

    func run() async throws {
        try? await cancelWhenGracefulShutdown { [interval, idleShare] in
            var before = ProcessMetrics.cpuSeconds()
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                HeapPolicy.trim()
                let now = ProcessMetrics.cpuSeconds()
                if let before, let now, now - before < idleShare * Double(interval.components.seconds) { ColdPages.release() }
                before = now
            }
        }
    }
}
