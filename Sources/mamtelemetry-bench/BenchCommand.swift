import ArgumentParser
import AsyncHTTPClient
import ClientOptions
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `mamtelemetry-bench`: a load generator for the throughput targets (sustained ingest, query
/// latency), a developer tool kept out of the operator CLI. It pre-generates realistic NDJSON bodies (and compresses each once) before the clock starts, so what is measured
/// is the daemon, not the generator. Closed loop (no `--rate`) finds the maximum
/// throughput; open loop (`--rate`) offers a fixed rate and measures each ack from the
/// request's *intended* send time, so a stalled daemon cannot hide its queueing delay
/// (coordinated omission).
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mamtelemetry-bench", abstract: "Generate realistic ingest load against a daemon and report throughput and latency.")

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
    @Option(
        help:
            "Spread event times over this many whole hours before the current hour (default: the last 10 minutes), so stats over a long window have history to read."
    )
    var spreadHours: Int?
    @Flag(help: "With --spread-hours: spread over the hours that end now (the current hour included) instead.")
    var toNow = false
    @Option(
        help:
            "Data set: guid (every record's device, app and session drawn on its own), fleet (one device's batch per request, ids reused, some relayed multi-device requests), small (events with few fields over 200,000 devices) or verbose (log bursts of one device around a failure, mostly multi-line verbose text); OTLP log bodies stay guid."
    )
    var data: BenchDataSet = .guid
    @Flag(
        help:
            "Stamp every record with the current time and every event with a fresh eventId at each send, so a run of any length never repeats a record (for soaks; bodies are re-encoded per send)."
    )
    var live = false
    @Option(
        help:
            "With --live, each send's eventIds: numbered (the send's number, then the record's: they arrive in order) or random (a fresh GUID per event, as the SDK sends)."
    )
    var eventIds: LiveEventIDs = .numbered
    @Flag(help: "Print the result as JSON.") var json = false

    func run() async throws {
        if live, logsProtocol != .native { throw ValidationError("--live sends native NDJSON log batches, not OTLP") }
        if !live, eventIds != .numbered { throw ValidationError("--event-ids applies to --live only") }
        // Live: eight hex digits, so each send can rewrite them in place (LiveBody).
        let nonce = UInt64(Date().timeIntervalSince1970 * 1000) & 0xFFFF_FFFF | (live ? 0x8000_0000 : 0)
        if let dump {
            try BenchData.dump(
                to: dump, records: dumpRecords, nonce: nonce, ppe: ppeFraction, disabled: disabledFraction, dataSet: data,
                batchSize: batchSize)
            return
        }
        // Sized so a closed loop at up to 150,000 records/s never wraps (a wrapped pool re-sends
        // eventIds, which the store answers as duplicates without storing: cheaper than new
        // records, so a wrapped run would overstate ingest). Bodies are kept compressed, about
        // 90 bytes a record with gzip.
        // A live pool is re-stamped at every send, so it only needs enough distinct bodies.
        let expected = live ? 100_000 : Int((rate ?? 150_000) * duration * 1.1)
        let times = spreadHours.map(toNow ? BenchTimes.hoursToNow : BenchTimes.hoursBeforeThisHour) ?? .lastTenMinutes
        let pool = BenchPool.make(
            records: poolRecords ?? min(max(expected, batchSize * concurrency * 2), 4_000_000), batchSize: batchSize,
            logsFraction: logsFraction, logsProtocol: logsProtocol, encoding: live ? .identity : encoding, nonce: nonce,
            ppe: ppeFraction, disabled: disabledFraction, times: times, dataSet: data)
        let liveBodies = live ? pool.bodies.map { LiveBody($0, referenceMs: times.startMs + times.spanMs) } : nil

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

        let encoding = encoding  // the workers capture the value, not the command
        let eventIds = eventIds
        let perWorker = await withTaskGroup(of: WorkerStats.self) { group in
            for _ in 0..<max(concurrency, 1) {
                group.addTask {
                    var stats = WorkerStats()
                    while true {
                        let i = next.value.add(1, ordering: .relaxed).oldValue
                        let intended: ContinuousClock.Instant
                        if let interval {
                            intended = start + interval * i
                            // Also stop when the run's time is up: a daemon that fell behind
                            // leaves the sends it never got counted as unsent, not queued.
                            if intended >= deadline || .now >= deadline { break }
                            if intended > .now { try? await Task.sleep(until: intended, clock: .continuous) }
                        } else {
                            intended = .now
                            if intended >= deadline { break }
                        }
                        let body = pool.bodies[i % pool.bodies.count]
                        var wire = body.wire
                        if let liveBodies {
                            let raw = liveBodies[i % liveBodies.count].stamped(
                                nowMs: Int64(Date().timeIntervalSince1970 * 1000), round: i / liveBodies.count, nonce: nonce, ids: eventIds)
                            wire = ByteBuffer(bytes: encoding.encoded(raw))
                        }
                        var request = HTTPClientRequest(url: base + body.path)
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: body.contentType)
                        if let e = encoding.header { request.headers.add(name: "Content-Encoding", value: e) }
                        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
                        request.body = .bytes(wire)
                        do {
                            let response = try await client.execute(request, timeout: .seconds(120))
                            let answer = try await response.body.collect(upTo: 16 << 20)
                            let done = ContinuousClock.now
                            stats.latenciesNs.append((done - intended).nanoseconds)
                            if response.status.code == 200 {
                                stats.requests += 1
                                stats.records += body.records
                                stats.wireBytes += wire.readableBytes
                                stats.rawBytes += body.rawBytes
                                stats.accepted +=
                                    body.isOTLP
                                    ? BenchPool.otlpAcceptedCount(answer, records: body.records) : BenchPool.acceptedCount(answer)
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
            concurrency: concurrency, seconds: elapsed, stats: total, poolRecords: pool.records,
            poolWrapped: !live && total.records > pool.records, idleRSSKiB: idle?.rssKiB, daemon: daemon, generatorCPUSeconds: selfCPU,
            unsentRequests: interval.map { max(0, Int(duration * 1e9 / Double($0.nanoseconds)) - next.value.load(ordering: .relaxed)) })
        print(json ? report.json() : report.text())
    }
}

/// One pre-built request: its path, the bytes on the wire and what they stand for.
