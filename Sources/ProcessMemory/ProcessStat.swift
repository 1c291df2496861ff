import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// This process's own figures from `/proc/self`: what the heap trim decides by and what
/// `/metrics` exposes as the standard `process_*` families.
public enum ProcessStat {
    /// Field 2 of `/proc/self/statm` is resident pages.
    public static func residentBytes() -> Int64? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Resident pages that are not file-backed or shared (fields 2 minus 3 of
    /// `/proc/self/statm`): the heaps, stacks and other anonymous memory.
    public static func anonymousBytes() -> Int64? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 2, let resident = Int64(fields[1]), let shared = Int64(fields[2]) else { return nil }
        return (resident - shared) * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// utime + stime (fields 14 and 15 of `/proc/self/stat`, in clock ticks). The command
    /// name in field 2 may hold spaces, so fields are counted after its closing parenthesis.
    public static func cpuSeconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let rest = stat[stat.index(after: close)...].split(separator: " ")
        // rest[0] is field 3 (state), so field n is rest[n - 3].
        guard rest.count > 12, let utime = Double(rest[11]), let stime = Double(rest[12]) else { return nil }
        return (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    public static func openDescriptors() -> Int? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return entries.count - 1  // the descriptor used to read the directory itself
    }
}
