import Foundation
import TestSupport
import Testing

/// Scaling out on ClickHouse, end to end with the built daemons and private clickhouse-server
/// 18.16 instances: two collectors on a two-shard cluster answer for each other; an outage of
/// ClickHouse in the middle of a load run loses nothing; a collector killed between an
/// acknowledged insert and its spool delete re-sends without a visible duplicate; opted-out
/// data reaches no table and PPE only the PPE database.
///
/// "Exactly once" here means what a reader can observe: each acknowledged record is returned
/// once by the API, and ClickHouse's folded view (`FINAL`, which collapses rows with the same
/// sort key as `ReplacingMergeTree` promises to) holds one row per acknowledged record. A
/// re-sent block may be stored twice until a merge folds it; that is by design (see
/// `RecordID`), so the raw row count is only bounded below.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseScaleOutTests {
    /// A collector on the ClickHouse backend writing `database`, given only `urls`.
    static func collector(
        _ id: Int, urls: [URL], database: String, cluster: String? = nil, environment: [String: String] = [:]
    ) throws -> DaemonProcess {
        var arguments = [
            "--store-backend", "clickhouse", "--clickhouse-url", urls.map(\.absoluteString).joined(separator: ","),
            "--clickhouse-database", database, "--collector-id", "\(id)",
        ]
        if let cluster { arguments += ["--clickhouse-cluster", cluster] }
        return try DaemonProcess(extraArguments: arguments, environment: environment)
    }

    static func event(_ eventId: String, app: String, device: String, marker: String = "") -> String {
        #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"\#(device)","eventId":"\#(eventId)","data":{"operation":"enroll","statusCode":100,"note":"\#(marker)"}}"#
    }

    /// Posts `lines` as one NDJSON request; the status.
    static func post(_ d: DaemonProcess, _ lines: [String]) async throws -> Int {
        try await d.post("/v1/telemetry", body: Array(lines.joined(separator: "\n").utf8)).0
    }

    /// The spool depth `/readyz` reports (`spool N records`), nil when it says none.
    static func spoolRecords(_ d: DaemonProcess) async throws -> Int? {
        let text = String(decoding: try await d.get("/readyz", timeout: .seconds(5)).1, as: UTF8.self)
        guard let range = text.range(of: #"spool (\d+) records"#, options: .regularExpression) else { return nil }
        return Int(text[range].split(separator: " ")[1])
    }

    /// Waits (bounded) until the collector has shipped at least `shipped` records since it
    /// started and its spool is empty; whether it got there. The shipped count comes first:
    /// the spool depth `/readyz` shows is refreshed after each forwarding pass, so right
    /// after an ingest or a start it can still say 0.
    static func spoolDrains(_ d: DaemonProcess, shipped: Double, within timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await metric(d, "mamtelemetry_forwarder_shipped_records_total") >= shipped, try await spoolRecords(d) == 0 {
                return true
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// Polls `condition` every 100 ms until it holds or `timeout` passes; whether it held.
    static func until(_ timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    /// The value of an unlabelled-or-summed Prometheus counter on `/metrics`.
    static func metric(_ d: DaemonProcess, _ name: String) async throws -> Double {
        let text = String(decoding: try await d.get("/metrics").1, as: UTF8.self)
        return text.split(separator: "\n").filter { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }

    /// The eventIds of `events`, with how often each appears.
    static func eventIdCounts(_ events: [[String: Any]]) -> [String: Int] {
        events.compactMap { $0["eventId"] as? String }.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    /// What ClickHouse's folded view of `database.records` holds: rows, distinct eventIds.
    static func folded(_ database: String) -> String {
        "SELECT count(), uniqExact(visitParamExtractString(raw, 'eventId')) FROM \(database).records FINAL FORMAT TSV"
    }

    // MARK: Two shards, two collectors

    @Test func twoCollectorsOnTwoShardsAnswerForEachOtherExactlyOnce() async throws {
        let cluster = try PrivateClickHouse(shards: 2)
        defer { cluster.destroy() }
        let database = TestBackend.uniqueDatabase()
        // Each collector knows only its own shard: the deployment the issue says must work.
        let a = try Self.collector(1, urls: [cluster.urls[0]], database: database, cluster: cluster.cluster)
        defer { a.cleanUp() }
        let b = try Self.collector(2, urls: [cluster.urls[1]], database: database, cluster: cluster.cluster)
        defer { b.cleanUp() }
        try await a.start()
        try await b.start()
        let app = "com.scale.\(UUID().uuidString.prefix(8))"

        let followers = [
            try await FollowClient.open(a, path: "/v1/events", query: "follow=true&app=\(app)", serverSentEvents: false),
            try await FollowClient.open(b, path: "/v1/events", query: "follow=true&app=\(app)", serverSentEvents: false),
        ]
        defer { for f in followers { Task { try? await f.close() } } }

        // Ten devices per collector: the cluster shards on (app, device), so both shards get rows.
        var expected = Set<String>()
        for (collector, d) in [("a", a), ("b", b)] {
            for round in 0..<4 {
                let ids = (0..<25).map { "\(collector)-\(round)-\($0)" }
                #expect(
                    try await Self.post(d, ids.enumerated().map { Self.event($1, app: app, device: "\(collector)-dev-\($0 % 10)") }) == 200)
                expected.formUnion(ids)
            }
        }

        let inspector = cluster.inspector()
        let landed = try await inspector.eventually(
            "SELECT count(), uniqExact(id, collector) FROM \(database).records FINAL WHERE app = '\(app)' FORMAT TSV", "200\t200\n")
        #expect(landed == "200\t200\n")
        // Rows are on both shards (each shard's local table), and nowhere twice.
        let perShard = try await cluster.urls.asyncMap {
            Int(try await cluster.query("SELECT count() FROM \(database).records_local FINAL FORMAT TSV", url: $0).trimmed) ?? -1
        }
        #expect(perShard.allSatisfy { $0 > 0 }, "rows per shard: \(perShard)")
        #expect(perShard.reduce(0, +) == 200, "rows per shard: \(perShard)")

        for d in [a, b] {
            // Queryable through either collector: every record once.
            let events = try await d.allEvents(extra: "&app=\(app)")
            let counts = Self.eventIdCounts(events)
            #expect(Set(counts.keys) == expected, "through \(d.baseURL): \(events.count) events")
            #expect(counts.values.allSatisfy { $0 == 1 } && events.count == 200, "duplicates through \(d.baseURL)")
            #expect(Set(events.compactMap { BundleFleet.recordID($0) }).count == 200, "ids are not distinct through \(d.baseURL)")

            // Bundled through either collector: the same records, once each.
            let (status, archive) = try await d.get("/v1/bundles?app=\(app)&since=-1h&format=tar.gz")
            #expect(status == 200, "\(String(decoding: archive.prefix(300), as: UTF8.self))")
            let file = d.dataDirectory.appendingPathComponent("scale.tar.gz")
            try Data(archive).write(to: file)
            let bundled = Self.eventIdCounts(BundleFleet.lines(try BundleFleet.unpack(file.path)["telemetry.ndjson"]))
            #expect(Set(bundled.keys) == expected && bundled.values.allSatisfy { $0 == 1 }, "bundle through \(d.baseURL): \(bundled.count)")
        }

        // Followed through either collector: each stream saw all 200 once (the other
        // collector's records once they were shipped).
        for (n, f) in followers.enumerated() {
            let deadline = ContinuousClock.now + .seconds(20)
            while f.records.count < 200, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            try await Task.sleep(for: .seconds(1))  // a duplicate would arrive now
            let counts = Self.eventIdCounts(f.records)
            #expect(Set(counts.keys) == expected && f.records.count == 200, "follow stream \(n): \(f.records.count) records")
        }
    }

    // MARK: Outage

    /// The outage lasts until the collector has failed to forward twice (so it is in back-off)
    /// while still acknowledging ingest, rather than a fixed time.
    @Test func anOutageMidLoadLosesNothingAndTheSpoolDrains() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let database = TestBackend.uniqueDatabase()
        let d = try Self.collector(1, urls: server.urls, database: database)
        defer { d.cleanUp() }
        try await d.start()
        let app = "com.outage"

        // The load: batches of 20 back to back until told to stop; every acknowledged eventId.
        let load = LoadRun()
        let loader = Task {
            var round = 0
            while !load.stopped {
                let ids = (0..<20).map { "o-\(round)-\($0)" }
                let status = (try? await Self.post(d, ids.enumerated().map { Self.event($1, app: app, device: "dev-\($0 % 7)") })) ?? 0
                load.record(status == 200 ? ids : [], status: status)
                round += 1
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        defer { load.stop() }

        let shipping = try await Self.until(.seconds(30)) {
            guard load.acked.count >= 100 else { return false }
            return try await Self.metric(d, "mamtelemetry_forwarder_shipped_records_total") > 0
        }
        #expect(shipping, "no records were acknowledged and shipped before the outage (\(load.refusals))")
        let beforeOutage = load.acked.count
        let errorsBefore = try await Self.metric(d, "mamtelemetry_forwarder_errors_total")
        // SIGKILL after 1 s: the outage is a server gone, not a slow shutdown.
        try server.stop(timeoutSeconds: 1)
        // Down until the forwarder has failed twice in a row (so it is in back-off) and ingest
        // went on being acknowledged into the spool meanwhile.
        let outage = try await Self.until(.seconds(60)) {
            guard load.acked.count >= beforeOutage + 100 else { return false }
            return try await Self.metric(d, "mamtelemetry_forwarder_errors_total") >= errorsBefore + 2
        }
        #expect(outage, "the forwarder did not fail or ingest stopped during the outage (\(load.refusals))")
        let duringOutage = load.acked.count - beforeOutage
        #expect(try await Self.spoolRecords(d) ?? 0 > 0, "nothing waits in the spool while ClickHouse is down")
        let shippedBeforeResume = try await Self.metric(d, "mamtelemetry_forwarder_shipped_records_total")
        try server.resume()
        // Load goes on until forwarding has resumed under it.
        let resumed = try await Self.until(.seconds(60)) {
            try await Self.metric(d, "mamtelemetry_forwarder_shipped_records_total") > shippedBeforeResume
        }
        #expect(resumed, "forwarding did not resume after ClickHouse came back")
        let afterResume = load.acked.count
        _ = try await Self.until(.seconds(10)) { load.acked.count >= afterResume + 20 }
        load.stop()
        _ = await loader.value

        let acked = Set(load.acked)
        #expect(acked.count == load.acked.count, "an eventId was acknowledged twice")
        #expect(beforeOutage > 0 && duringOutage > 0, "ingest was not acknowledged during the outage (\(load.refusals))")
        #expect(load.refusals.isEmpty, "ingest was refused: \(load.refusals)")
        // The spool drains by itself after the outage (back-off is capped at 30 s).
        let drained = try await Self.spoolDrains(d, shipped: Double(acked.count), within: .seconds(60))
        let left = try await Self.spoolRecords(d) ?? -1
        #expect(drained, "spool still holds \(left) records")

        let inspector = server.inspector()
        let folded = try await inspector.eventually(Self.folded(database), "\(acked.count)\t\(acked.count)\n", timeout: .seconds(10))
        #expect(folded == "\(acked.count)\t\(acked.count)\n", "acked \(acked.count)")
        let stored = Set(
            try await inspector.query("SELECT visitParamExtractString(raw, 'eventId') FROM \(database).records FINAL FORMAT TSV")
                .split(separator: "\n").map(String.init))
        #expect(stored == acked, "missing: \(acked.subtracting(stored).count), unexpected: \(stored.subtracting(acked).count)")

        let events = try await d.allEvents(extra: "&app=\(app)")
        let counts = Self.eventIdCounts(events)
        #expect(Set(counts.keys) == acked && events.count == acked.count, "API: \(events.count) events for \(acked.count) acked")
    }

    // MARK: Crash

    /// The collector SIGKILLs itself right after ClickHouse acknowledged an insert and before
    /// the spool forgets the batch (`MAMTELEMETRYD_TEST_CRASH_AT=after-clickhouse-insert`),
    /// the one window where a crash makes a re-send. Restarted, it sends the batch again.
    @Test func killNineBetweenInsertAndSpoolDeleteResendsWithoutAVisibleDuplicate() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let database = TestBackend.uniqueDatabase()
        let d = try Self.collector(
            1, urls: server.urls, database: database, environment: ["MAMTELEMETRYD_TEST_CRASH_AT": "after-clickhouse-insert"])
        defer { d.cleanUp() }
        try await d.start()
        let app = "com.crash"
        let ids = (0..<500).map { "k-\($0)" }
        #expect(try await Self.post(d, ids.enumerated().map { Self.event($1, app: app, device: "dev-\($0 % 9)") }) == 200)

        let died = try #require(d.process).wait(timeout: .seconds(30))
        try #require(died, "the crash point was never reached")
        #expect(d.process?.terminationReason == .uncaughtSignal && d.exitStatus == SIGKILL)
        let inspector = server.inspector()
        // The insert happened before the crash: ClickHouse holds the batch already.
        #expect(try await inspector.query(Self.folded(database)) == "500\t500\n")

        d.environment = [:]
        try await d.start()
        // The restarted collector ships the batch again (the spool still held it) ...
        #expect(try await Self.spoolDrains(d, shipped: 500, within: .seconds(30)))
        #expect(try await Self.metric(d, "mamtelemetry_forwarder_shipped_records_total") == 500)
        #expect(Int(try await inspector.query("SELECT count() FROM \(database).records FORMAT TSV").trimmed) ?? 0 >= 500)
        // ... and no reader sees it twice.
        #expect(try await inspector.query(Self.folded(database)) == "500\t500\n")
        let events = try await d.allEvents(extra: "&app=\(app)")
        let counts = Self.eventIdCounts(events)
        #expect(Set(counts.keys) == Set(ids) && events.count == 500, "API: \(events.count) events, \(counts.count) distinct")
    }

    // MARK: Privacy

    @Test func anOptedOutMarkerIsInNoTableAndPPEOnlyInThePPEDatabase() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let database = TestBackend.uniqueDatabase()
        let d = try Self.collector(1, urls: server.urls, database: database)
        defer { d.cleanUp() }
        try await d.start()
        let optedOut = "OPTED-OUT-\(UUID().uuidString)"
        let ppe = "PPE-ONLY-\(UUID().uuidString)"
        let prod = "PROD-\(UUID().uuidString)"
        #expect(try await d.post("/v1/apps/com.registry.optout", body: Array(#"{"telemetryDisabled":true}"#.utf8), method: .PUT).0 == 200)
        let lines = [
            #"{"name":"AppLaunch","appId":"com.self.optout","deviceId":"\#(optedOut)","data":{"m":"\#(optedOut)"},"settings":{"MAMTelemetryDisabled":true}}"#,
            #"{"name":"AppLaunch","appId":"com.registry.optout","deviceId":"\#(optedOut)"}"#,
            #"{"name":"AppLaunch","appId":"com.ppe","deviceId":"\#(ppe)","settings":{"MAMTelemetryUsePPE":true}}"#,
            #"{"name":"AppLaunch","appId":"com.prod","deviceId":"\#(prod)"}"#,
        ]
        #expect(try await Self.post(d, lines) == 200)
        let optedOutLog = #"{"level":"error","message":"\#(optedOut)","appId":"com.registry.optout","deviceId":"x"}"#
        #expect(try await d.post("/v1/logs", body: Array(optedOutLog.utf8)).0 == 200)
        // The prod and the PPE event.
        #expect(try await Self.spoolDrains(d, shipped: 2, within: .seconds(30)))

        let inspector = server.inspector()
        // Positive controls first: a search that finds nothing proves only if it can find.
        let prodFound = try await inspector.tablesContaining(prod)
        #expect(prodFound.found == ["\(database).records"])
        let ppeFound = try await inspector.tablesContaining(ppe)
        #expect(ppeFound.found == ["\(database)_ppe.records"], "PPE data outside the PPE database: \(ppeFound.found)")
        let optedOutFound = try await inspector.tablesContaining(optedOut)
        #expect(optedOutFound.found.isEmpty, "opted-out data in \(optedOutFound.found)")
        #expect(optedOutFound.searched.contains("\(database).incidents") && optedOutFound.searched.count >= 6)
    }
}

/// The acknowledged eventIds of a load run and the refusals it met, shared between the
/// posting task and the test.
final class LoadRun: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [String] = []
    private var refused: [Int: Int] = [:]
    private var isStopped = false

    var acked: [String] { lock.withLock { ids } }
    var refusals: [Int: Int] { lock.withLock { refused } }
    var stopped: Bool { lock.withLock { isStopped } }

    func record(_ acknowledged: [String], status: Int) {
        lock.withLock {
            ids += acknowledged
            if status != 200 { refused[status, default: 0] += 1 }
        }
    }

    func stop() { lock.withLock { isStopped = true } }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for element in self { out.append(try await transform(element)) }
        return out
    }
}
