import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

struct WorkerStats: Sendable {
    var requests = 0
    var records = 0
    var accepted = 0
    var wireBytes = 0
    var rawBytes = 0
    var latenciesNs: [Int64] = []
    var errors: [String: Int] = [:]

    mutating func merge(_ o: WorkerStats) {
        requests += o.requests
        records += o.records
        accepted += o.accepted
        wireBytes += o.wireBytes
        rawBytes += o.rawBytes
        latenciesNs += o.latenciesNs
        errors.merge(o.errors, uniquingKeysWith: +)
    }
}

/// The daemon's memory and CPU from /proc: RSS sampled every 250 ms (peak kept), CPU as
/// the utime+stime delta over the run.
final class ProcessSampler: Sendable {
    let pid: Int32
    let state = Mutex<(peakKiB: Int, startTicks: Int?, startTime: ContinuousClock.Instant)>((0, nil, .now))

    struct Sample: Sendable {
        var rssKiB: Int
        var ticks: Int
    }
    struct Summary: Sendable {
        var rssKiB: Int
        var peakRSSKiB: Int
        var cpuPercent: Double
    }

    init(pid: Int32) {
        self.pid = pid
        let s = Self.read(pid)
        state.withLock { $0 = (s?.rssKiB ?? 0, s?.ticks, .now) }
    }

    func sample() -> Sample? { Self.read(pid) }

    static func read(_ pid: Int32) -> Sample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        var rss = 0
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            rss = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        // Fields after the ")" start at field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        return Sample(rssKiB: rss, ticks: ticks)
    }

    func run() async {
        while !Task.isCancelled {
            if let s = sample() { state.withLock { $0.peakKiB = max($0.peakKiB, s.rssKiB) } }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    func finish() async -> Summary? {
        guard let s = sample() else { return nil }
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        return state.withLock { st in
            let secs = (ContinuousClock.now - st.startTime).seconds
            let cpu = st.startTicks.map { Double(s.ticks - $0) / hz / secs * 100 } ?? 0
            return Summary(rssKiB: s.rssKiB, peakRSSKiB: max(st.peakKiB, s.rssKiB), cpuPercent: cpu)
        }
    }

    static func ownCPUSeconds() -> Double {
        var u = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
        return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
    }
}

struct BenchReport {
    let mode: String
    let offeredRate: Double?
    let encoding: String
    let batchSize: Int
    let concurrency: Int
    let seconds: Double
    let stats: WorkerStats
    let poolRecords: Int
    let poolWrapped: Bool
    let idleRSSKiB: Int?
    let daemon: ProcessSampler.Summary?
    let generatorCPUSeconds: Double
    /// Open loop: sends the run's time ran out before (the daemon was behind the offered rate).
    var unsentRequests: Int? = nil

    var latenciesMs: [Double] { stats.latenciesNs.sorted().map { Double($0) / 1e6 } }
    func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }
    var recordsPerSecond: Double { Double(stats.records) / seconds }

    var fields: [(String, Any)] {
        let l = latenciesMs
        var f: [(String, Any)] = [
            ("mode", mode), ("encoding", encoding), ("batchSize", batchSize), ("concurrency", concurrency),
            ("seconds", round3(seconds)), ("requests", stats.requests), ("records", stats.records), ("accepted", stats.accepted),
            ("recordsPerSecond", round3(recordsPerSecond)),
            ("rawMBPerSecond", round3(Double(stats.rawBytes) / seconds / 1e6)),
            ("wireMBPerSecond", round3(Double(stats.wireBytes) / seconds / 1e6)),
            ("avgRecordBytes", stats.records == 0 ? 0 : stats.rawBytes / stats.records),
            ("latencyMsP50", round3(percentile(l, 0.50))), ("latencyMsP95", round3(percentile(l, 0.95))),
            ("latencyMsP99", round3(percentile(l, 0.99))), ("latencyMsMax", round3(l.last ?? 0)),
            ("errors", stats.errors), ("poolRecords", poolRecords), ("poolWrapped", poolWrapped),
            ("generatorCPUSeconds", round3(generatorCPUSeconds)),
        ]
        if let offeredRate { f.append(("offeredRecordsPerSecond", offeredRate)) }
        if let unsentRequests { f.append(("unsentRequests", unsentRequests)) }
        if let idleRSSKiB { f.append(("daemonRSSBeforeMiB", round3(Double(idleRSSKiB) / 1024))) }
        if let daemon {
            f.append(("daemonRSSAfterMiB", round3(Double(daemon.rssKiB) / 1024)))
            f.append(("daemonPeakRSSMiB", round3(Double(daemon.peakRSSKiB) / 1024)))
            f.append(("daemonCPUPercent", round3(daemon.cpuPercent)))
        }
        return f
    }

    func round3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }

    func json() -> String {
        let dict = Dictionary(uniqueKeysWithValues: fields.map { ($0.0, $0.1) })
        let data = (try? JSONSerialization.data(withJSONObject: dict, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    func text() -> String {
        fields.map { k, v in "\(k.padding(toLength: 26, withPad: " ", startingAt: 0)) \(v)" }.joined(separator: "\n")
    }
}

/// Durations as plain numbers for the report and the latency samples.
extension Duration {
    var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
    var nanoseconds: Int64 {
        let (s, a) = components
        return s * 1_000_000_000 + a / 1_000_000_000
    }
}

/// The shared "next batch number" of the workers: an atomic in a class, since a bare
/// `Atomic` cannot be captured by the concurrent worker closures.
final class SequenceCounter: Sendable {
    let value = Atomic<Int>(0)
}
