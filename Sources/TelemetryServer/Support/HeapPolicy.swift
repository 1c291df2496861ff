import CMalloc
import ServiceLifecycle

/// How the daemon hands freed memory back to the system. glibc's allocator keeps freed heap
/// for reuse: after a burst of ingest (request bodies, inflated batches, prepared encodings,
/// all freed once committed) about half of the daemon's anonymous memory was free heap still
/// counted in its RSS (`make bench`, BENCHMARKS.md: 92 MiB anonymous after load, 40 MiB after
/// `malloc_trim`), and glibc's adaptive mmap threshold had moved every large buffer onto that
/// heap. An operator sizing `MemoryMax=` sees RSS, so the daemon returns what it does not use.
enum HeapPolicy {
    /// Buffers from 256 KiB up (decompressed bodies, batch payloads, segments) get their own
    /// mappings, returned to the system on free; the heap's top is trimmed once 1 MiB is free.
    /// Setting either fixes glibc's thresholds (no adaptive growth toward 32 MiB).
    static func apply() {
        _ = mallopt(M_MMAP_THRESHOLD, 256 << 10)
        _ = mallopt(M_TRIM_THRESHOLD, 1 << 20)
    }

    /// Returns free pages inside the heaps (which the top-of-heap trim cannot reach) to the
    /// system; a few milliseconds over all arenas.
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
