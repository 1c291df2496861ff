import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `mamtelemetryctl bench`: a load generator for SPEC §10. It pre-generates realistic
/// NDJSON bodies (and compresses each once) before the clock starts, so what is measured
/// is the daemon, not the generator. Closed loop (no `--rate`) finds the maximum
/// throughput; open loop (`--rate`) offers a fixed rate and measures each ack from the
/// request's *intended* send time, so a stalled daemon cannot hide its queueing delay
/// (coordinated omission).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Generate realistic ingest load against a daemon and report throughput and latency.")

    @OptionGroup var server: ServerOptions
    @Option(help: "Records per request.") var batchSize = 500
    @Option(help: "Requests in flight at once.") var concurrency = 16
    @Option(help: "Seconds of load.") var duration: Double = 10
    @Option(help: "Content-Encoding of the bodies: identity, gzip or deflate.") var encoding: BenchEncoding = .gzip
    @Option(help: "Fraction of events whose settings say MAMTelemetryUsePPE=YES.") var ppeFraction = 0.0
    @Option(help: "Fraction of events whose settings say MAMTelemetryDisabled=YES (dropped at the edge).") var disabledFraction = 0.0
    @Option(help: "Fraction of requests that are log batches (POST /v1/logs) rather than telemetry.") var logsFraction = 0.2
    @Option(help: "Wire format of the log batches: native (NDJSON) or otlp (OTLP/HTTP protobuf, as an OpenTelemetry exporter sends).")
    var logsProtocol: BenchLogsProtocol = .native
    @Option(help: "Offered records/s (open loop). Without it the load is closed loop (max throughput).") var rate: Double?
    @Option(help: "Distinct records pre-generated; every record sent is unique until the pool wraps (then the daemon sees duplicates).")
    var poolRecords: Int?
    @Option(help: "Daemon process id, to report its RSS and CPU from /proc.") var pid: Int32?
    @Option(help: "Write the generated records as events.ndjson and logs.ndjson into this directory, then exit (for baselines).")
    var dump: String?
    @Option(help: "Records to write with --dump.") var dumpRecords = 100_000
    @Option(help: "Spread event times over this many whole hours before the current hour (default: the last 10 minutes), so stats over a long window have history to read.")
    var spreadHours: Int?
    @Flag(help: "Print the result as JSON.") var json = false

    func run() async throws {
        let nonce = UInt64(Date().timeIntervalSince1970 * 1000) & 0xFFFF_FFFF
        if let dump {
            try BenchData.dump(to: dump, records: dumpRecords, nonce: nonce, ppe: ppeFraction, disabled: disabledFraction)
            return
        }
        let expected = Int((rate ?? 60_000) * duration * 1.1)
        let pool = try BenchPool.make(
            records: poolRecords ?? min(max(expected, batchSize * concurrency * 2), 1_500_000), batchSize: batchSize,
            logsFraction: logsFraction, logsProtocol: logsProtocol, encoding: encoding, nonce: nonce, ppe: ppeFraction,
            disabled: disabledFraction, times: spreadHours.map(BenchTimes.hoursBeforeThisHour) ?? .lastTenMinutes)

        var config = HTTPClient.Configuration()
        config.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(concurrency, 1))
        config.timeout = .init(connect: .seconds(5), read: .seconds(120))
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: config)
        let base = server.url.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let token = server.resolvedToken

        let sampler = pid.map { ProcessSampler(pid: $0) }
        let idle = sampler?.sample()
        let samplerTask = sampler.map { s in Task { await s.run() } }

        let next = SequenceCounter()
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(duration * 1000))
        let interval: Duration? = rate.map { .nanoseconds(Int64(Double(batchSize) / $0 * 1e9)) }
        let selfCPU0 = ProcessSampler.ownCPUSeconds()

        let perWorker = await withTaskGroup(of: WorkerStats.self) { group in
            for _ in 0..<max(concurrency, 1) {
                group.addTask {
                    var stats = WorkerStats()
                    while true {
                        let i = next.value.add(1, ordering: .relaxed).oldValue
                        let intended: ContinuousClock.Instant
                        if let interval {
                            intended = start + interval * i
                            if intended >= deadline { break }
                            if intended > .now { try? await Task.sleep(until: intended, clock: .continuous) }
                        } else {
                            intended = .now
                            if intended >= deadline { break }
                        }
                        let body = pool.bodies[i % pool.bodies.count]
                        var request = HTTPClientRequest(url: base + body.path)
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: body.contentType)
                        if let e = encoding.header { request.headers.add(name: "Content-Encoding", value: e) }
                        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
                        request.body = .bytes(body.wire)
                        do {
                            let response = try await client.execute(request, timeout: .seconds(120))
                            let answer = try await response.body.collect(upTo: 16 << 20)
                            let done = ContinuousClock.now
                            stats.latenciesNs.append((done - intended).nanoseconds)
                            if response.status.code == 200 {
                                stats.requests += 1
                                stats.records += body.records
                                stats.wireBytes += body.wire.readableBytes
                                stats.rawBytes += body.rawBytes
                                stats.accepted += body.isOTLP ? BenchPool.otlpAcceptedCount(answer, records: body.records) : BenchPool.acceptedCount(answer)
                            } else {
                                stats.errors["\(response.status.code)", default: 0] += 1
                            }
                        } catch {
                            stats.errors["\(type(of: error))", default: 0] += 1
                        }
                    }
                    return stats
                }
            }
            var all: [WorkerStats] = []
            for await s in group { all.append(s) }
            return all
        }
        let elapsed = (ContinuousClock.now - start).seconds
        let selfCPU = ProcessSampler.ownCPUSeconds() - selfCPU0
        samplerTask?.cancel()
        let daemon = await sampler?.finish()
        try await client.shutdown()

        var total = WorkerStats()
        for s in perWorker { total.merge(s) }
        let report = BenchReport(
            mode: rate == nil ? "closed" : "open", offeredRate: rate, encoding: encoding.rawValue, batchSize: batchSize,
            concurrency: concurrency, seconds: elapsed, stats: total, poolRecords: pool.records, poolWrapped: total.records > pool.records,
            idleRSSKiB: idle?.rssKiB, daemon: daemon, generatorCPUSeconds: selfCPU)
        print(json ? report.json() : report.text())
    }
}

enum BenchEncoding: String, ExpressibleByArgument, Sendable {
    case identity, gzip, deflate
    var header: String? { self == .identity ? nil : rawValue }
}

/// One pre-built request: its path, the bytes on the wire and what they stand for.
struct BenchBody: Sendable {
    let path: String
    let wire: ByteBuffer
    let records: Int
    let rawBytes: Int
    var contentType = "application/x-ndjson"
    var isOTLP: Bool { contentType == BenchLogsProtocol.otlpContentType }
}

/// The pre-generated request bodies, compressed once before the clock starts.
struct BenchPool: Sendable {
    let bodies: [BenchBody]
    let records: Int

    static func make(
        records: Int, batchSize: Int, logsFraction: Double, logsProtocol: BenchLogsProtocol = .native, encoding: BenchEncoding,
        nonce: UInt64, ppe: Double, disabled: Double, times: BenchTimes = .lastTenMinutes
    ) throws -> BenchPool {
        let count = max(1, (records + batchSize - 1) / batchSize)
        let zlib = encoding == .identity ? nil : try Zlib.load()
        // Build in parallel (before timing) so large pools are ready in seconds.
        let slots = Mutex([BenchBody?](repeating: nil, count: count))
        DispatchQueue.concurrentPerform(iterations: count) { b in
            var gen = BenchData(seed: nonce &+ UInt64(b) &* 0x9E37_79B9, nonce: nonce, ppe: ppe, disabled: disabled, times: times)
            let isLog = Double(b % 100) < logsFraction * 100
            var raw: [UInt8] = []
            raw.reserveCapacity(batchSize * 420)
            let otlp = isLog && logsProtocol == .otlp
            if otlp {
                raw = gen.otlpLogs(count: batchSize)
            } else {
                for r in 0..<batchSize {
                    if isLog { gen.log(into: &raw) } else { gen.event(into: &raw, id: UInt64(b) << 20 | UInt64(r)) }
                }
            }
            let wire: [UInt8]
            switch encoding {
            case .identity: wire = raw
            case .deflate: wire = zlib!.compress(raw)
            case .gzip: wire = zlib!.gzip(raw)
            }
            let body = BenchBody(
                path: isLog ? "/v1/logs" : "/v1/telemetry", wire: ByteBuffer(bytes: wire), records: batchSize, rawBytes: raw.count,
                contentType: otlp ? BenchLogsProtocol.otlpContentType : "application/x-ndjson")
            slots.withLock { $0[b] = body }
        }
        let bodies = slots.withLock { $0.compactMap { $0 } }
        // Interleave logs among telemetry rather than in one block.
        return BenchPool(bodies: bodies, records: count * batchSize)
    }

    /// Reads `"accepted":N` from the ack without a full JSON parse.
    static func acceptedCount(_ answer: ByteBuffer) -> Int {
        let bytes = answer.readableBytesView
        let key = Array("\"accepted\":".utf8)
        guard let r = bytes.firstRange(of: key) else { return 0 }
        var n = 0
        for c in bytes[r.upperBound...] {
            guard c >= 0x30 && c <= 0x39 else { break }
            n = n * 10 + Int(c - 0x30)
        }
        return n
    }
}

/// When the generated records happened: uniformly within `startMs ..< startMs + spanMs`.
struct BenchTimes: Sendable {
    var startMs: Int64
    var spanMs: Int64

    /// The default: live traffic of the last ten minutes.
    static var lastTenMinutes: BenchTimes {
        BenchTimes(startMs: Int64(Date().timeIntervalSince1970 * 1000) - 600_000, spanMs: 600_000)
    }

    /// History: the `hours` whole hours that end where the current hour starts, so a stats
    /// window ending there reads whole hours only.
    static func hoursBeforeThisHour(_ hours: Int) -> BenchTimes {
        let hour: Int64 = 3_600_000
        let thisHour = Int64(Date().timeIntervalSince1970 * 1000) / hour * hour
        return BenchTimes(startMs: thisHour - Int64(max(hours, 1)) * hour, spanMs: Int64(max(hours, 1)) * hour)
    }
}

/// Realistic MAM SDK telemetry: three event kinds, a skewed status-code mix, a fleet of
/// devices and a few apps, plus verbose/info diagnostic logs. Deterministic per seed.
struct BenchData {
    var rng: UInt64
    let nonce: UInt64
    let ppe: Double
    let disabled: Double
    let times: BenchTimes

    init(seed: UInt64, nonce: UInt64, ppe: Double, disabled: Double, times: BenchTimes = .lastTenMinutes) {
        self.rng = seed | 1
        self.nonce = nonce
        self.ppe = ppe
        self.disabled = disabled
        self.times = times
    }

    static let apps = [
        ("com.contoso.outlook", "4.2411.0"), ("com.microsoft.teams", "6.21.1"), ("com.contoso.crm", "2.3.7"),
        ("com.microsoft.office.word", "2.91.2"), ("com.contoso.expenses", "1.14.0"), ("com.microsoft.edge", "131.2903.70"),
    ]
    static let statusMix: [(Int, Int)] = [(100, 45), (101, 35), (200, 5), (203, 4), (205, 3), (212, 4), (216, 4)]
    static let operations = [
        ("policyCheckIn", "autoEnrollOnLaunch"), ("enrollment", "registerAndEnrollAccount"),
        ("mamServiceLookup", "lookupMAMServiceURL"), ("policyCheckIn", "periodicCheckIn"), ("unenrollment", "deRegisterAndUnenrollAccount"),
    ]
    static let actions = ["wipe", "selectiveWipe", "policyRefresh", "pinPrompt", "conditionalLaunchBlock", "saveAsBlocked"]
    static let management = [("MAM-WE", 60), ("MDM", 30), ("Unmanaged", 10)]
    static let logTemplates = [
        ("Identity", "Acquired token for resource https://msmamservice.api.application.com in %d ms"),
        ("MAMPolicyManager", "Policy check-in completed: %d policies applied, no changes"),
        ("Enrollment", "Enrollment state is enrolled; next check-in in %d s"),
        ("MAMFileProtection", "Protected %d files in app container with class CompleteUntilFirstUserAuthentication"),
        ("ConditionalLaunch", "Conditional launch evaluation passed (%d rules)"),
    ]

    mutating func next() -> UInt64 {
        rng &+= 0x9E37_79B9_7F4A_7C15
        var z = rng
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) < p * 1_000_000 }
    mutating func weighted<T>(_ items: [(T, Int)]) -> T {
        var r = below(items.reduce(0) { $0 + $1.1 })
        for (v, w) in items {
            if r < w { return v }
            r -= w
        }
        return items[0].0
    }

    /// Stable GUID-looking ids so the same device keeps its id across records.
    static func guid(_ kind: UInt64, _ n: Int) -> String {
        var h = kind &* 0x1000_0000_01B3 ^ UInt64(n) &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        let a = String(h, radix: 16).leftPad(16)
        let b = String(h &* 0xBF58_476D_1CE4_E5B9, radix: 16).leftPad(16)
        let s = Array(a + b)
        return "\(String(s[0..<8]))-\(String(s[8..<12]))-4\(String(s[13..<16]))-a\(String(s[17..<20]))-\(String(s[20..<32]))"
    }

    mutating func time() -> String {
        let ms = times.startMs + Int64(below(Int(times.spanMs)))
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        var t = time_t(ms / 1000)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        _ = date
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tmv.tm_year) + 1900, Int(tmv.tm_mon) + 1, Int(tmv.tm_mday),
            Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec), Int(ms % 1000))
    }

    mutating func event(into out: inout [UInt8], id: UInt64) {
        let (app, version) = Self.apps[below(Self.apps.count)]
        let device = below(20_000)
        let user = device % 15_000
        let kind = below(100)
        var settings = "\"VerboseLoggingEnabled\":\"\(chance(0.1) ? "YES" : "NO")\""
        if chance(ppe) { settings += ",\"MAMTelemetryUsePPE\":\"YES\"" }
        if chance(disabled) { settings += ",\"MAMTelemetryDisabled\":\"YES\"" }
        let name: String
        let data: String
        if kind < 50 {
            name = "EnrollmentCall"
            let code = weighted(Self.statusMix)
            let (op, api) = Self.operations[below(Self.operations.count)]
            data =
                "{\"operation\":\"\(op)\",\"api\":\"\(api)\",\"statusCode\":\(code),\"didSucceed\":\(code == 100 || code == 101 ? "true" : "false"),\"durationMs\":\(80 + below(900))}"
        } else if kind < 80 {
            name = "AppLaunch"
            data = "{\"managementType\":\"\(weighted(Self.management))\",\"coldStart\":\(chance(0.3)),\"launchMs\":\(200 + below(1500))}"
        } else {
            name = "IntuneAction"
            data = "{\"action\":\"\(Self.actions[below(Self.actions.count)])\",\"initiatedBy\":\"\(chance(0.8) ? "admin" : "system")\"}"
        }
        let line =
            "{\"name\":\"\(name)\",\"time\":\"\(time())\",\"appId\":\"\(app)\",\"appVersion\":\"\(version)\",\"sdkVersion\":\"19.6.\(below(3))\",\"platform\":\"\(device % 3 == 0 ? "Android" : "iOS")\",\"deviceId\":\"\(Self.guid(1, device))\",\"sessionId\":\"\(Self.guid(2, device * 7 + below(4)))\",\"identity\":\"user\(user)@contoso.com\",\"accountId\":\"\(Self.guid(3, user))\",\"tenantId\":\"\(Self.guid(4, user % 5))\",\"eventId\":\"\(String(nonce, radix: 16))-\(String(id, radix: 16))\",\"settings\":{\(settings)},\"data\":\(data)}\n"
        out.append(contentsOf: line.utf8)
    }

    mutating func log(into out: inout [UInt8]) {
        let (app, _) = Self.apps[below(Self.apps.count)]
        let r = logRecord(device: below(20_000))
        let line =
            "{\"time\":\"\(r.time)\",\"level\":\"\(r.verbose ? "verbose" : "info")\",\"message\":\"\(r.message)\",\"appId\":\"\(app)\",\"deviceId\":\"\(r.deviceId)\",\"sessionId\":\"\(r.sessionId)\",\"component\":\"\(r.component)\"}\n"
        out.append(contentsOf: line.utf8)
    }

    /// One diagnostic log record of `device`, the same draw for NDJSON and OTLP bodies.
    mutating func logRecord(device: Int) -> BenchLogRecord {
        let (component, template) = Self.logTemplates[below(Self.logTemplates.count)]
        let message = template.replacingOccurrences(of: "%d", with: String(1 + below(900)))
        let time = time()
        let verbose = chance(0.6)
        return BenchLogRecord(
            time: time, verbose: verbose, message: message, deviceId: Self.guid(1, device),
            sessionId: Self.guid(2, device * 7 + below(4)), component: component)
    }

    static func dump(to directory: String, records: Int, nonce: UInt64, ppe: Double, disabled: Double) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var gen = BenchData(seed: nonce, nonce: nonce, ppe: ppe, disabled: disabled)
        var events: [UInt8] = []
        var logs: [UInt8] = []
        for i in 0..<records {
            gen.event(into: &events, id: UInt64(i))
            gen.log(into: &logs)
        }
        try Data(events).write(to: URL(fileURLWithPath: directory + "/events.ndjson"))
        try Data(logs).write(to: URL(fileURLWithPath: directory + "/logs.ndjson"))
    }
}

extension String {
    fileprivate func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}

/// zlib through `dlopen`, because this executable's target does not link zlib: only the
/// one-shot `compress2` (zlib format = HTTP `deflate`) and `crc32` (to wrap the same
/// deflate stream as gzip) are needed.
struct Zlib: @unchecked Sendable {
    typealias Compress2 = @convention(c) (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt>, UnsafePointer<UInt8>, UInt, Int32) -> Int32
    typealias Bound = @convention(c) (UInt) -> UInt
    typealias CRC32 = @convention(c) (UInt, UnsafePointer<UInt8>, UInt32) -> UInt
    let compress2: Compress2
    let bound: Bound
    let crc: CRC32

    struct Missing: Error, CustomStringConvertible {
        var description: String { "libz.so.1 could not be loaded; install zlib1g or use --encoding identity" }
    }

    static func load() throws -> Zlib {
        guard let h = dlopen("libz.so.1", RTLD_NOW), let c = dlsym(h, "compress2"), let b = dlsym(h, "compressBound"),
            let r = dlsym(h, "crc32")
        else { throw Missing() }
        return Zlib(
            compress2: unsafeBitCast(c, to: Compress2.self), bound: unsafeBitCast(b, to: Bound.self), crc: unsafeBitCast(r, to: CRC32.self))
    }

    /// zlib-wrapped deflate at level 6, what SDKs send as `Content-Encoding: deflate`.
    func compress(_ input: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(bound(UInt(input.count))))
        var len = UInt(out.count)
        let rc = input.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { compress2($0.baseAddress!, &len, src.baseAddress!, UInt(src.count), 6) }
        }
        precondition(rc == 0, "compress2 failed: \(rc)")
        return Array(out.prefix(Int(len)))
    }

    /// The same deflate stream with a gzip header and CRC-32/size trailer instead of zlib's.
    func gzip(_ input: [UInt8]) -> [UInt8] {
        let z = compress(input)
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        out.append(contentsOf: z[2..<(z.count - 4)])
        let c = input.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: crc(0, $0.baseAddress!, UInt32($0.count))) }
        let n = UInt32(truncatingIfNeeded: input.count)
        for v in [c, n] { out.append(contentsOf: [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]) }
        return out
    }
}

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

extension Duration {
    fileprivate var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
    fileprivate var nanoseconds: Int64 {
        let (s, a) = components
        return s * 1_000_000_000 + a / 1_000_000_000
    }
}


/// The shared "next batch number" of the workers: an atomic in a class, since a bare
/// `Atomic` cannot be captured by the concurrent worker closures.
final class SequenceCounter: Sendable {
    let value = Atomic<Int>(0)
}
