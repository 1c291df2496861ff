import ProcessMemory
import TelemetryModel
import TelemetryStore

/// Process figures read from `/proc/self` at scrape time (RSS, CPU, open descriptors), in
/// the names the Prometheus client libraries use, so stock dashboards and alerts apply; and
/// the two shares of the anonymous memory the daemon can name: what the heap holds in use
/// and, of that, what SQLite's connections hold (the rest of the resident memory is code,
/// stacks and free heap pages not yet trimmed).
enum ProcessMetrics {
    static func exposition() -> String {
        var out = ""
        if let rss = ProcessStat.residentBytes() {
            out += "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
            out += "# TYPE process_resident_memory_bytes gauge\n"
            out += "process_resident_memory_bytes \(rss)\n"
        }
        if let cpu = ProcessStat.cpuSeconds() {
            out += "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
            out += "# TYPE process_cpu_seconds_total counter\n"
            out += "process_cpu_seconds_total \(cpu)\n"
        }
        if let fds = ProcessStat.openDescriptors() {
            out += "# HELP process_open_fds Number of open file descriptors.\n"
            out += "# TYPE process_open_fds gauge\n"
            out += "process_open_fds \(fds)\n"
        }
        for (name, value) in [(MetricName.heapInUse, HeapPolicy.inUseBytes()), (.sqliteMemory, SQLiteMemory.usedBytes())] {
            out += "# HELP \(name.rawValue) \(name.help)\n"
            out += "# TYPE \(name.rawValue) gauge\n"
            out += "\(name.rawValue) \(value)\n"
        }
        return out
    }
}
