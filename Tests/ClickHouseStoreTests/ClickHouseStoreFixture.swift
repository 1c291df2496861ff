import Foundation
import Logging
import Metrics
import MetricsTestKit
import StoreCore
import Synchronization
import TelemetryModel
import TestSupport

@testable import ClickHouseStore
@testable import TelemetryStore

/// Wall time a test sets; durations run on the real monotonic clock.
final class SettableClock: WallClock {
    private let now: Mutex<Int64>
    init(_ ms: Int64) { now = Mutex(ms) }
    func set(_ ms: Int64) { now.withLock { $0 = ms } }
    func nowMilliseconds() -> Int64 { now.withLock { $0 } }
    func monotonicNow() -> ContinuousClock.Instant { .now }
}

/// A private ClickHouse 18.16, a spool (the embedded store, committer running), the
/// ClickHouse-backed store over both, and optionally the forwarder shipping in the background.
final class ClickHouseStoreFixture: @unchecked Sendable {
    let server: PrivateClickHouse
    let directory: URL
    let spool: SQLiteRecordStore
    let client: ClickHouseClient
    let store: ClickHouseRecordStore
    let forwarder: ClickHouseForwarder
    let metrics = TestMetrics()
    let clock: any WallClock
    /// False when the server is another fixture's (a second collector of the same ClickHouse).
    let ownsServer: Bool
    private var tasks: [Task<Void, any Error>] = []

    init(
        database: String = "mamr", tuning: ClickHouseRecordStore.Tuning = .init(), clock: any WallClock = SystemWallClock(),
        forwarding: Bool = true, observer: (@Sendable (ClickHouseExchange) -> Void)? = nil, server shared: PrivateClickHouse? = nil,
        collector: UInt8 = 3
    )
        async throws
    {
        server = try shared ?? PrivateClickHouse()
        ownsServer = shared == nil
        self.clock = clock
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chstore-\(UUID().uuidString)")
        spool = try SQLiteRecordStore(directory: directory, clock: clock, metrics: NOOPMetricsHandler.instance)
        client = ClickHouseClient(
            configuration: .init(endpoints: server.urls, database: database, requestTimeoutSeconds: 5), observer: observer)
        try await ClickHouseMigrator(client: client).migrate()
        store = ClickHouseRecordStore(spool: spool, client: client, tuning: tuning, clock: clock, metrics: metrics)
        var shipping = ClickHouseForwarder.Tuning()
        shipping.idlePoll = .milliseconds(100)
        forwarder = ClickHouseForwarder(
            spool: spool, client: client, collector: CollectorID(collector), tuning: shipping, clock: clock,
            metrics: NOOPMetricsHandler.instance,
            logger: Logger(label: "forwarder"))
        let committer = spool.committer
        tasks.append(Task { try await committer.run() })
        if forwarding { startForwarding() }
    }

    func startForwarding() {
        let forwarder = self.forwarder
        tasks.append(Task { try await forwarder.run() })
    }

    /// Ships what the spool holds now (for tests that run without the background forwarder).
    func shipNow() async throws { _ = try await forwarder.pass() }

    func close() async {
        await spool.committer.close()
        for t in tasks { t.cancel() }
        try? await client.shutdown()
        if ownsServer { server.destroy() }
        try? FileManager.default.removeItem(at: directory)
    }

    @discardableResult
    func append(_ records: [DecodedRecord], kind: RecordKind = .event, env: TelemetryEnvironment = .prod, receivedAt: Int64? = nil)
        async throws -> [Int64]
    {
        try await spool.append(records, kind: kind, env: env, receivedAt: receivedAt ?? clock.nowMilliseconds(), incident: nil).ids
    }

    /// Every page of `query` (following `nextAfter`), with the page sizes.
    static func allPages(_ store: any RecordStore, _ query: RecordQuery) async throws -> (records: [StoredRecord], pages: Int) {
        var q = query
        var all: [StoredRecord] = []
        var pages = 0
        while true {
            let page = try await store.query(q)
            all += page.records
            pages += 1
            guard let next = page.nextAfter else { return (all, pages) }
            q.after = next
            if pages > 1000 { return (all, pages) }
        }
    }
}

/// Records with every key the filters read.
enum Records {
    static func event(
        app: String, device: String, identity: String = "", name: String = "AppLaunch", time: Int64, statusCode: Int? = nil,
        durationMs: Double? = nil, succeeded: Bool? = nil, detail: String = "", text: String = ""
    ) -> DecodedRecord {
        var w = JSONWriter()
        w.beginObject()
        w.field("name", name)
        w.field("appId", app)
        w.field("deviceId", device)
        if !identity.isEmpty { w.field("identity", identity) }
        w.field("time", time)
        if !text.isEmpty { w.field("text", text) }
        w.endObject()
        return DecodedRecord(
            json: w.bytes,
            keys: RecordKeys(
                time: time, appId: app, deviceId: device, identity: identity.lowercased(), name: name, detail: detail,
                statusCode: statusCode, durationMs: durationMs, succeeded: succeeded),
            flags: .unspecified, eventId: nil)
    }

    static func log(app: String, device: String, level: LogLevel?, time: Int64, message: String) -> DecodedRecord {
        var w = JSONWriter()
        w.beginObject()
        w.field("appId", app)
        w.field("deviceId", device)
        w.field("message", message)
        w.field("time", time)
        w.endObject()
        return DecodedRecord(
            json: w.bytes, keys: RecordKeys(time: time, appId: app, deviceId: device, detail: "net", level: level), flags: .unspecified,
            eventId: nil, message: message)
    }
}

extension DecodedRecord {
    /// Gives the record `id` as its `eventId` the way ingest does: in its JSON and beside it
    /// (a spool reads the id it ships from the stored record).
    mutating func setEventId(_ id: String?) {
        eventId = id
        guard let id else { return }
        json = JSONSplice.prepend(JSONWriter.quoted("eventId") + [UInt8(ascii: ":")] + JSONWriter.quoted(id), to: json)
    }
}
