public import Metrics
public import StoreCore
public import TelemetryModel

/// The ClickHouse backend behind ``RecordStore``: writes go to the embedded store (the spool)
/// exactly as on the embedded backend, so a 2xx still means "on this collector's disk", and
/// ``ClickHouseForwarder`` ships them; reads run as ClickHouse SQL against the `records` and
/// `incidents` tables (`Distributed` ones with a cluster, so every shard is read), after the
/// ``ReadFence`` has let this collector's acknowledged records reach ClickHouse.
///
/// Ids handed out by reads (and taken as cursors) are ``RecordID``s, ordered by receive
/// second across the cluster, not the spool's sequence numbers. Failures to reach ClickHouse
/// surface as ``ClickHouseError`` (the HTTP layer answers 503 for unreachable and timeout).
public final class ClickHouseRecordStore: RecordStore, Sendable {
    public struct Tuning: Sendable {
        /// How long a read waits for this collector's spool to ship what it acknowledged:
        /// `fenceBound` without progress, `fenceMaxWait` in all (see ``ReadFence``).
        public var fenceBound: Duration = .seconds(5)
        public var fenceMaxWait: Duration = .seconds(30)
        public var fencePoll: Duration = .milliseconds(20)
        /// How far the follow watermark trails the clock, and how often it is polled.
        public var followLag: Duration = .seconds(2)
        public var followPoll: Duration = .milliseconds(250)
        /// How old ClickHouse's part sizes in ``sizes()`` may be before a read measures again.
        public var sizesMaxAge: Duration = .seconds(30)
        /// How long ingest waits for ClickHouse to say whether a request repeats records
        /// another collector stored (``ClickHouseRetryCheck``) before storing it as new.
        public var retryCheckDeadline: Duration = .milliseconds(500)
        /// Whether it asks at all (`clickhouse.recogniseRetries`).
        public var recogniseRetries = true
        public init() {}
    }

    let spool: any RecordStore & Spool
    public let client: ClickHouseClient
    let fence: ReadFence
    let reader: ClickHouseRecordReader
    let watermark: FollowWatermark
    let diskUsage: ClickHouseDiskUsage
    let retryCheck: ClickHouseRetryCheck?

    /// `spool` takes every write and is what the forwarder drains; `clock` and `sleep` time the
    /// fence and the follow poller (tests pass their own); `metrics` counts fence timeouts.
    public init(
        spool: any RecordStore & Spool, client: ClickHouseClient, tuning: Tuning = .init(), clock: any WallClock,
        metrics: any MetricsFactory, sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.spool = spool
        self.client = client
        let base = client.configuration.database
        let database: @Sendable (TelemetryEnvironment) -> String = { ClickHouseMigrator.database(base, env: $0) }
        fence = ReadFence(
            spool: spool, clock: clock, bound: tuning.fenceBound, maxWait: tuning.fenceMaxWait, poll: tuning.fencePoll, sleep: sleep,
            timeouts: Counter(label: MetricName.clickHouseReadFenceTimeouts.rawValue, factory: metrics))
        reader = ClickHouseRecordReader(client: client, database: database)
        watermark = FollowWatermark(
            client: client, database: database, clock: clock, lag: tuning.followLag, interval: tuning.followPoll, sleep: sleep)
        diskUsage = ClickHouseDiskUsage(client: client, clock: clock, maxAge: tuning.sizesMaxAge)
        retryCheck =
            !tuning.recogniseRetries
            ? nil
            : ClickHouseRetryCheck(
                client: client, database: database, deadline: tuning.retryCheckDeadline,
                skipped: Counter(label: MetricName.clickHouseRetryCheckSkipped.rawValue, factory: metrics))
    }

    func database(_ env: TelemetryEnvironment) -> String {
        ClickHouseMigrator.database(client.configuration.database, env: env)
    }

    /// Into the spool, as on the embedded backend, less the records ClickHouse already holds
    /// from another collector (a client's retry through a load balancer), which are answered
    /// `duplicate` (see ``ClickHouseRetryCheck``).
    public func append(_ request: AppendRequest) async throws -> AppendOutcomes {
        guard let retryCheck else { return try await spool.append(request) }
        let known = await retryCheck.storedElsewhere(request)
        guard !known.isEmpty else { return try await spool.append(request) }
        let rest = request.removing(known)
        let outcomes = rest.records.isEmpty ? AppendOutcomes() : try await spool.append(rest)
        return outcomes.restoring(known, in: request)
    }

    public func query(_ query: RecordQuery) async throws -> RecordPage {
        try await fence.wait(env: query.env)
        let (records, next) = try await reader.page(query)
        return RecordPage(records: records, nextAfter: next)
    }

    /// Reads the whole page from ClickHouse before visiting, so the cursor is known first
    /// (announced when asked and there is no `contains` filter, as on the embedded store)
    /// and a failing read fails before any record is handed out.
    public func scan(_ query: RecordQuery, announcePageEnd: Bool, _ visit: @Sendable (ScanEvent) -> Void) async throws -> Int64? {
        try await fence.wait(env: query.env)
        let (records, next) = try await reader.page(query)
        if announcePageEnd, query.contains == nil { visit(.pageEnd(next)) }
        for r in records {
            r.json.withUnsafeBufferPointer { json in
                visit(.record(ScannedRecord(id: r.id, receivedAt: r.receivedAt, env: r.env, keys: r.keys, json: json)))
            }
        }
        return next
    }

    public func eventStats(_ scan: EventStatsScan, _ visit: @Sendable (EventStatsInput) -> Void) async throws {
        try await fence.wait(env: scan.env)
        try await ClickHouseEventStats(client: client, database: database(scan.env), scan: scan).visit(visit)
    }

    /// One `GROUP BY` over the window's enrollment calls: distinct devices and users per app
    /// and status code, and per app among the failed calls (the rule the stats count by: a
    /// call's own `didSucceed`, else its code's range).
    public func enrollmentReach(env: TelemetryEnvironment, since: Int64, until: Int64, app: String?) async throws -> EnrollmentReach {
        try await fence.wait(env: env)
        var filters: [ClickHouseSQL] = [
            "kind = 'event'", "name = \(EventName.enrollmentCall)", "time >= \(since)", "time <= \(until)",
        ]
        if let app { filters.append("app = \(app)") }
        let filter = ClickHouseSQL.joined(filters, separator: " AND ")
        let failed: ClickHouseSQL = "ifNull(succeeded = 0, ifNull(NOT (statusCode >= 100 AND statusCode < 200), 0))"
        let byCode = try await client.execute(
            """
            SELECT app, statusCode, uniqExactIf(device, device != ''), uniqExactIf(identity, identity != '')
            FROM \(identifier: database(env)).records WHERE \(fragment: filter)
            GROUP BY app, statusCode FORMAT TabSeparated
            """)
        let failing = try await client.execute(
            """
            SELECT app, uniqExactIf(device, device != '' AND \(fragment: failed)), uniqExactIf(identity, identity != '' AND \(fragment: failed))
            FROM \(identifier: database(env)).records WHERE \(fragment: filter)
            GROUP BY app FORMAT TabSeparated
            """)
        var reach = EnrollmentReach()
        for row in try TabSeparatedRows(byCode, columns: 4).rows {
            let key = EnrollmentReach.Key(
                app: TabSeparatedRows.string(row[0]),
                statusCode: try TabSeparatedRows.optionalInt(row[1]).map { Int(truncatingIfNeeded: $0) })
            reach.byCode[key] = .init(devices: Int(try TabSeparatedRows.int(row[2])), users: Int(try TabSeparatedRows.int(row[3])))
        }
        for row in try TabSeparatedRows(failing, columns: 3).rows {
            let count = EnrollmentReach.Count(devices: Int(try TabSeparatedRows.int(row[1])), users: Int(try TabSeparatedRows.int(row[2])))
            if count.devices > 0 || count.users > 0 { reach.failingByApp[TabSeparatedRows.string(row[0])] = count }
        }
        return reach
    }

    /// Refused with ``RollupsNotKept``: this backend keeps no rollups (stats aggregate the
    /// records in ClickHouse when asked), so there is nothing to rebuild, and an answer of
    /// zero rows would read as a rebuild that found no records.
    public func rebuildRollups(env: TelemetryEnvironment) async throws -> RollupRebuildResult {
        throw RollupsNotKept()
    }

    /// This collector's own incidents are in its spool from the moment they were
    /// acknowledged (kept, marked shipped, after forwarding); others' come from ClickHouse,
    /// production's database first, then PPE's, as the embedded store looks.
    public func incident(id: String) async throws -> Incident? {
        if let local = try await spool.incident(id: id) { return local }
        for env in TelemetryEnvironment.allCases {
            let answer = try await client.execute(
                """
                SELECT id, guid, app, device, session, identity, description, createdAt, recordCount, firstTime, lastTime
                FROM \(identifier: database(env)).incidents WHERE id = \(id) LIMIT 1 FORMAT TabSeparated
                """)
            guard let row = try TabSeparatedRows(answer, columns: 11).rows.first else { continue }
            return try Self.incident(row, env: env)
        }
        return nil
    }

    /// This collector's incidents from its spool (there from the moment they were
    /// acknowledged), every collector's from ClickHouse; each once, newest first.
    public func incidents(_ query: IncidentQuery) async throws -> IncidentPage {
        try await fence.wait(env: query.env)
        let local = try await spool.incidents(query).incidents
        var filters: [ClickHouseSQL] = ["1"]
        if let v = query.since { filters.append("createdAt >= \(v)") }
        if let v = query.until { filters.append("createdAt <= \(v)") }
        if let v = query.app { filters.append("app = \(v)") }
        if let v = query.apps { filters.append("has(\(v.sorted()), app)") }
        if let v = query.device { filters.append("device = \(v)") }
        if let after = query.after {
            filters.append("(createdAt < \(after.createdAt) OR (createdAt = \(after.createdAt) AND id < \(after.id)))")
        }
        let answer = try await client.execute(
            """
            SELECT id, guid, app, device, session, identity, description, createdAt, recordCount, firstTime, lastTime
            FROM \(identifier: database(query.env)).incidents WHERE \(fragment: ClickHouseSQL.joined(filters, separator: " AND "))
            ORDER BY createdAt DESC, id DESC LIMIT 1 BY id LIMIT \(max(query.limit, 0) + 1)
            FORMAT TabSeparated
            """)
        var byID: [String: Incident] = [:]
        for row in try TabSeparatedRows(answer, columns: 11).rows {
            let i = try Self.incident(row, env: query.env)
            byID[i.id] = i
        }
        for i in local { byID[i.id] = i }
        return IncidentPage.cut(byID.values, query)
    }

    static func incident(_ row: [ArraySlice<UInt8>], env: TelemetryEnvironment) throws -> Incident {
        Incident(
            id: TabSeparatedRows.string(row[0]), guid: TabSeparatedRows.string(row[1]), env: env,
            appId: TabSeparatedRows.string(row[2]), deviceId: TabSeparatedRows.optionalString(row[3]),
            sessionId: TabSeparatedRows.optionalString(row[4]), identity: TabSeparatedRows.optionalString(row[5]),
            description: TabSeparatedRows.optionalString(row[6]), createdAt: try TabSeparatedRows.int(row[7]),
            recordCount: Int(try TabSeparatedRows.int(row[8])), firstTime: try TabSeparatedRows.optionalInt(row[9]),
            lastTime: try TabSeparatedRows.optionalInt(row[10]))
    }

    public func findDevices(_ lookup: DeviceLookup) async throws -> DeviceLookupResult {
        try await fence.wait(env: lookup.env)
        return try await ClickHouseDeviceLookup(client: client, database: database(lookup.env)).find(lookup)
    }

    public func devices(
        usedBy user: IdentitySelector, env: TelemetryEnvironment, apps: Set<String>?, since: Int64?, until: Int64?, limit: Int
    ) async throws
        -> [String]
    {
        try await fence.wait(env: env)
        return try await ClickHouseDeviceLookup(client: client, database: database(env))
            .devices(usedBy: user.normalized, apps: apps, since: since, until: until, limit: limit)
    }

    /// The newest id in ClickHouse (0 when empty), after the fence.
    public func latestID(env: TelemetryEnvironment) async throws -> Int64 {
        try await fence.wait(env: env)
        let answer = try await client.execute("SELECT max(id) FROM \(identifier: database(env)).records FORMAT TabSeparated")
        return try TabSeparatedRows(answer, columns: 1).rows.first.map { try TabSeparatedRows.int($0[0]) } ?? 0
    }

    /// Notices from a ``FollowWatermark`` poller, one per subscriber, which stops when the
    /// subscriber goes away or the store closes (the spool's commit stream ends).
    public func commits() -> AsyncStream<CommitNotice> {
        let (stream, continuation) = AsyncStream<CommitNotice>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let closing = spool.commits()
        let watermark = self.watermark
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in closing {} }
                group.addTask { await watermark.run { continuation.yield($0) } }
                await group.next()
                group.cancelAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Bytes on disk per environment: this collector's spool, plus ClickHouse's active parts
    /// of this backend's tables on every endpoint it knows, as last measured (see
    /// ``ClickHouseDiskUsage``: a stale measurement is renewed in the background).
    public func sizes() -> PerEnvironment<Int64> {
        let spooled = spool.sizes()
        let stored = diskUsage.latest()
        return PerEnvironment { spooled[$0].saturatingAdding(stored[$0]) }
    }

    /// Measures ClickHouse's part sizes now, so the next ``sizes()`` includes them; returns them.
    @discardableResult
    public func refreshClickHouseSizes() async throws -> PerEnvironment<Int64> {
        try await diskUsage.refresh()
    }
}
