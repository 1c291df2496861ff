import CMalloc
public import Foundation

/// How the daemon uses glibc's heap. Two things pull against each other: large buffers
/// (inflated segments, request bodies, response chunks) should be reused from the heap
/// rather than mapped and faulted in page by page each time, and memory freed after a burst
/// should leave the RSS an operator sizes `MemoryMax=` by.
///
/// - Large buffers come from the heap (mmap threshold 32 MiB): with glibc's adaptive
///   thresholds a query page re-faulted every segment buffer. Setting either threshold
///   alone is worse than neither: glibc then stops adapting the other.
/// - A heap keeps at most 2 MiB free at its top (trim threshold). glibc trims a thread
///   arena's top only when a `free` leaves more than this there, and `malloc_trim` never
///   trims it: above the largest heap a thread arena holds, an arena a burst had filled
///   would stay resident for good, and under steady load the RSS would step up by one
///   arena after another. Under steady load about half of the anonymous RSS is free heap
///   between trims; at 2 MiB the arenas' tops give theirs back as they free it, for more
///   page faults.
/// - At most four arenas (two per core here): threads beyond them share, so what one
///   arena keeps free is bounded four times, not once per thread glibc happened to start.
/// - `HeapTrimService` hands back free pages inside the heaps (`malloc_trim`), at once when
///   the resident free memory (anonymous RSS minus the heap in use) has grown by 8 MiB since
///   it last did, and every 10 s anyway.
///
/// The figures behind each number, and what they cost ingest and queries, are in
/// BENCHMARKS.md. A setting given to glibc directly (`GLIBC_TUNABLES=glibc.malloc.arena_max=8`,
/// `...trim_threshold=...`, `...mmap_threshold=...`) is left as given.
public enum HeapPolicy {
    public static let mmapThreshold: Int32 = 32 << 20
    public static let trimThreshold: Int32 = 2 << 20
    public static let arenaMax: Int32 = 4
    /// Growth of the resident free memory (``residentFreeBytes()``) since the last trim at
    /// which `HeapTrimService` trims without waiting for its interval. Measured on what is
    /// free rather than on the RSS: a burst that is still running grows the RSS with memory
    /// in use, which no trim can return, and once it ends its memory is free but the RSS
    /// has stopped growing, so a trigger on RSS growth waited for the interval (BENCHMARKS.md,
    /// issue 28).
    public static let freeGrowthBeforeTrim: Int64 = 8 << 20

    /// Sets the thresholds and the arena cap; called once at start, before the services
    /// start their threads.
    public static func configure(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        if !tunables.contains("glibc.malloc.mmap_threshold") { _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold) }
        if !tunables.contains("glibc.malloc.trim_threshold") { _ = mallopt(M_TRIM_THRESHOLD, trimThreshold) }
        if !tunables.contains("glibc.malloc.arena_max") { _ = mallopt(M_ARENA_MAX, arenaMax) }
    }

    /// Returns free pages inside the heaps, which glibc's own top-of-heap trim cannot reach,
    /// to the system; a few milliseconds over all arenas.
    public static func trim() {
        _ = malloc_trim(0)
    }

    /// Bytes the program holds from the allocator: chunks in use in every arena and blocks
    /// it mapped on its own. `mallinfo2` walks the arenas' free lists: well under a
    /// millisecond on a compact heap, ~10 ms on one fragmented by large query pages.
    public static func inUseBytes() -> Int64 {
        let info = mallinfo2()
        return Int64(info.uordblks) + Int64(info.hblkhd)
    }

    /// Anonymous RSS that the heap does not hold in use: freed chunks whose pages are still
    /// resident (what a trim can return), plus stacks and other anonymous mappings, which
    /// stay about constant. nil when `/proc` cannot be read.
    public static func residentFreeBytes() -> Int64? {
        guard let anonymous = ProcessStat.anonymousBytes() else { return nil }
        return anonymous - inUseBytes()
    }
}
