import Foundation
import Logging
import StoreCore
import Synchronization
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore
@testable import TelemetryStore

/// Every statement shape the backend sends, captured from the client while the real backend
/// runs against a private 18.16: the migration, the forwarder's inserts, every read (records
/// with each filter and cursor, stats, enrollment reach, incidents, devices, follow), sizes and
/// retention (a partition drop included). With `MAMTELEMETRYD_TEST_TRANSCRIPT=path` it writes
/// them (parameterized as 19.11+ servers get them, with 18.16's answers) for
/// scripts/clickhouse/modern.sh to replay on a current ClickHouse; the statements are thus
/// only ever the ones the Swift code builds.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseTranscriptTests {
    static let variable = "MAMTELEMETRYD_TEST_TRANSCRIPT"

    @Test func everyStatementShapeIsCaptured() async throws {
        let exchanges = Mutex<[ClickHouseExchange]>([])
        let f = try await ClickHouseStoreFixture(database: "tx", forwarding: false) { e in exchanges.withLock { $0.append(e) } }
        let now = f.clock.nowMilliseconds()
        let t0 = now - 3_600_000
        var events: [DecodedRecord] = []
        for i in 0..<24 {
            let code = [100, 400, 503][i % 3]
            events.append(
                Records.event(
                    app: i % 2 == 0 ? "com.a" : "com.b", device: "dev-\(i % 4)", identity: i % 5 == 0 ? "Jane@Contoso.com" : "",
                    name: i % 4 == 0 ? "AppLaunch" : "EnrollmentCall", time: t0 + Int64(i) * 60_000, statusCode: code,
                    durationMs: i % 3 == 0 ? nil : Double(i) * 12.5, succeeded: i % 3 == 2 ? nil : code == 100,
                    detail: ["enroll", "checkin"][i % 2], text: i % 6 == 0 ? "needle \(i) 'quoted' \\ tab\t" : "hay"))
        }
        let logs = (0..<10).map { i in
            Records.log(
                app: "com.a", device: "dev-\(i % 2)", level: [LogLevel.verbose, .info, .warning, .error, nil][i % 5],
                time: t0 + Int64(i) * 1000, message: "line \(i) ünïcödé")
        }
        // Half the events carry an eventId: shipped into `event_ids`, asked for by a retry below.
        for i in stride(from: 0, to: events.count, by: 2) { events[i].setEventId("evt-\(i) 'q' \\ \t") }
        try await f.append(events, receivedAt: now - 5000)
        try await f.append(logs, kind: .log, receivedAt: now - 5000)
        // Old enough for retention to drop its partition.
        var old = Records.event(app: "com.a", device: "old", time: t0)
        old.setEventId("evt-old")
        try await f.append([old], receivedAt: now - 40 * 86_400_000)
        let incident = Incident(
            id: IncidentID.random().value, guid: "0f0e0d0c-0000-4000-8000-000000000001", env: .prod, appId: "com.a", deviceId: "dev-1",
            sessionId: "s-1", identity: "jane@contoso.com", description: "it broke", createdAt: now - 4000, recordCount: 1,
            firstTime: t0, lastTime: t0)
        _ = try await f.spool.append(
            [Records.log(app: "com.a", device: "dev-1", level: .error, time: t0, message: "upload")], kind: .log, env: .prod,
            receivedAt: now - 4000, incident: incident)
        try await f.shipNow()
        // A client's retry: the lookup in `event_ids` finds the shipped originals.
        let retry = try await f.store.append(Array(events.prefix(4)), kind: .event, env: .prod, receivedAt: now - 3000, incident: nil)
        #expect(retry.duplicateIndices == [0, 2] && retry.stored == 2)
        // Shipped too, so no read below waits out the read fence (5 s each) for them.
        try await f.shipNow()

        let queries: [RecordQuery] = [
            RecordQuery(kind: .event, limit: 5, order: .asc),
            RecordQuery(kind: .event, limit: 5, after: 1, order: .desc),
            RecordQuery(kind: .event, app: "com.a", device: "dev-0", name: "AppLaunch", since: t0, until: now, limit: 50),
            RecordQuery(kind: .event, identity: "jane@contoso.com", statusCode: 400, limit: 50),
            RecordQuery(kind: .event, contains: "needle", limit: 50),
            RecordQuery(kind: .log, session: "s-1", minLevel: .warning, incident: incident.id, limit: 50),
            RecordQuery(kind: .log, env: .ppe, limit: 10),
        ]
        for var q in queries {
            let page = try await f.store.query(q)
            if let next = page.nextAfter {
                q.after = next
                _ = try await f.store.query(q)
            }
        }
        var widened = RecordQuery(kind: .event, identity: "jane@contoso.com", limit: 50, order: .asc)
        widened.identityDevices = ["dev-0", "dev-1"]
        widened.apps = ["com.a", "com.b"]
        _ = try await f.store.query(widened)
        for name in ["EnrollmentCall", "AppLaunch"] {
            for app in [nil, "com.b"] {
                let scan = EventStatsScan(
                    env: .prod, name: name, since: t0 - 3_600_000, until: now, app: app,
                    rollupGrain: .hour, bucketMs: EventRollupScope.hourMs)
                try await f.store.eventStats(scan) { _ in }
            }
        }
        _ = try await f.store.enrollmentReach(env: .prod, since: t0, until: now, app: nil)
        _ = try await f.store.enrollmentReach(env: .prod, since: t0, until: now, app: "com.a")
        #expect(try await f.store.incident(id: incident.id)?.guid == incident.guid)
        _ = try await f.store.incident(id: "nosuchid")
        _ = try await f.store.incidents(IncidentQuery(since: t0, until: now, app: "com.a", device: "dev-1", limit: 5))
        _ = try await f.store.incidents(IncidentQuery(after: IncidentCursor(createdAt: now, id: "zzz")))
        for text in ["dev-1", "DEV", "dav-2", "zz"] {
            _ = try await f.store.findDevices(DeviceLookup(text: text, env: .prod, apps: ["com.a", "com.b"], limit: 5))
        }
        _ = try await f.store.devices(usedBy: "jane@contoso.com", env: .prod, apps: ["com.a"], since: t0, until: now, limit: 10)
        _ = try await f.store.latestID(env: .prod)
        _ = try await f.store.watermark.watermark(env: .prod)
        try await f.store.refreshClickHouseSizes()
        let retention = ClickHouseRetention(client: f.client, spool: f.spool, logger: Logger(label: "transcript"))
        let dropped = try await retention.applyRetention(
            RetentionPolicy().limits(for: .prod), env: .prod, nowMs: now, returnFreeSpace: false)
        #expect(dropped.records == 1)
        // After the drop, a read again, so a replay proves the same rows are left.
        _ = try await f.store.query(RecordQuery(kind: .event, limit: 100, order: .asc))

        let captured = exchanges.withLock { $0 }
        let texts = captured.map { $0.statement.parameterized().text }
        for shape in [
            "CREATE TABLE IF NOT EXISTS", "INSERT INTO tx.records (id, collector, kind", "FORMAT TabSeparated",
            "INSERT INTO tx.incidents FORMAT JSONEachRow", "INSERT INTO tx.event_ids (kind, app, eventId", "FROM tx.event_ids",
            "uniqExact", "DROP PARTITION", "system.parts", "{p0:String}", "{p0:Int64}", "LIMIT 1 BY",
        ] {
            #expect(texts.contains { $0.contains(shape) }, "no statement with \(shape)")
        }
        if let path = ProcessInfo.processInfo.environment[Self.variable] {
            var out = ""
            for e in captured {
                let (text, parameters) = e.statement.parameterized()
                let entry: [String: Any] = [
                    "sql": text, "params": Dictionary(uniqueKeysWithValues: parameters.map { ($0.name, $0.value) }),
                    "data": e.rows.map { String(decoding: $0, as: UTF8.self) } ?? NSNull(),
                    "answer": String(decoding: e.answer, as: UTF8.self),
                ]
                out += String(decoding: try JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys]), as: UTF8.self) + "\n"
            }
            try out.write(toFile: path, atomically: true, encoding: .utf8)
        }
        await f.close()
    }
}
