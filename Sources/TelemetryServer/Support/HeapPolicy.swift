import CMalloc
import ServiceLifecycle

/// How the daemon hands freed memory back to the system. glibc's allocator keeps freed heap
/// for reuse: after a burst of ingest (request bodies, inflated batches, prepared encodings,
/// all freed once committed) about half of the daemon's anonymous memory was free heap still
/// counted in its RSS (BENCHMARKS.md, "Memory": 92 MiB anonymous after load, 40 MiB after
/// `malloc_trim`). An operator sizing `MemoryMax=` sees RSS, so the daemon returns what it
/// does not use. glibc's thresholds are deliberately left adaptive: fixing them (`mallopt`
/// with a 256 KiB mmap threshold) lowered the peak under load by ~20 MiB but cost queries
/// ~20% (every large buffer a fresh mapping, faulted in page by page), measured in the same
/// benchmark.
enum HeapPolicy {
    /// Returns free pages inside the heaps, which glibc's own top-of-heap trim cannot reach,
    /// to the system; a few milliseconds over all arenas.
    static func trim() {
        _ = malloc_trim(0)
    }
}

/// Trims the heaps every `interval` while the daemon runs, so memory freed after a burst of
/// load leaves the RSS within seconds instead of staying until the next burst reuses it.
struct HeapTrimService: Service {
    var interval: Duration = .seconds(10)

    func run() async throws {
        try? await cancelWhenGracefulShutdown { [interval] in
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                HeapPolicy.trim()
            }
        }
    }
}
