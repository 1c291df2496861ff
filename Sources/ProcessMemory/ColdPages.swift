import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Hands the kernel back the pages of the daemon's code and read-only data that it is not
/// using: `madvise(MADV_PAGEOUT)` over every read-only, file-backed mapping (the executable and
/// its shared libraries). An idle daemon's RSS was about 40 MiB of such pages against 5 MiB of
/// heap: what start-up (argument parsing, migrations, the Swift runtime's first conformance
/// lookups) touched once, plus the neighbours the kernel maps around every code fault.
///
/// Only pages no other process maps are reclaimed (the kernel skips shared ones), and nothing
/// is lost: a page needed again is read back from the file. That costs the first request after
/// a release a few tens of milliseconds (measured: a 3 ms query took 25 ms once, 31 ms with
/// the page cache dropped too), which is why this runs only at start and after an idle interval
/// (the daemon's heap trim service), never under load.
public enum ColdPages {
    /// `MADV_PAGEOUT` (Linux 5.4); older kernels refuse it with EINVAL and nothing happens.
    static let pageOut: Int32 = 21

    /// Advises every read-only file-backed mapping of this process; returns the bytes advised.
    @discardableResult
    public static func release(mapsPath: String = "/proc/self/maps") -> Int {
        // Read to the end: a /proc file reports size 0, and a read sized by it stops at a page.
        guard let handle = FileHandle(forReadingAtPath: mapsPath) else { return 0 }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return 0 }
        let maps = String(decoding: data, as: UTF8.self)
        var advised = 0
        for line in maps.split(separator: "\n") {
            guard let mapping = Mapping(line), mapping.readOnlyFile else { continue }
            if madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), mapping.length, pageOut) == 0 {
                advised += mapping.length
            }
        }
        return advised
    }

    /// One line of `/proc/self/maps`: `start-end perms offset dev inode path`.
    struct Mapping {
        var start: UInt
        var length: Int
        var permissions: Substring
        var path: Substring

        init?(_ line: Substring) {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5 else { return nil }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), end > start
            else { return nil }
            self.start = start
            length = Int(end - start)
            permissions = fields[1]
            path = fields.count == 6 ? fields[5].drop { $0 == " " } : ""
        }

        /// Backed by a file (not the heap, a stack, `[vdso]`) and not writable: its pages are
        /// clean copies of the file, so dropping them loses nothing.
        var readOnlyFile: Bool { path.hasPrefix("/") && !permissions.contains("w") }
    }
}
