import ProcessMemory

/// Process figures read from `/proc/self` at scrape time (RSS, CPU, open descriptors), in
/// the names the Prometheus client libraries use, so stock dashboards and alerts apply.
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
        return out
    }
}
