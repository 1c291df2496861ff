import Foundation
import Logging
import Metrics
import StoreCore
import Synchronization
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore
@testable import TelemetryStore

/// The forwarder's inserts against a private 18.16: the `TabSeparated` body carries every byte
/// of every column unchanged, a failure among several inserts in flight leaves each row in
/// ClickHouse once, with the spool forgetting batches only in commit order, and a removal
/// waiting for the spool's writer does not hold back the next insert.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseShippingTests {
    @Test func generatedRecordsWithHostileBytesRoundTripThroughClickHouseUnchanged() async throws {
        let f = try await ClickHouseStoreFixture(database: "bytes", forwarding: false)
        var rng = SeededRandom(seed: PropertyScale.seed(0x6279_7465))
        let count = PropertyScale.cases(400)
        let keys = (0..<count).map { i in
            RecordKeys(
                time: Int64(bitPattern: rng.next()), appId: HostileBytes.string(&rng), deviceId: HostileBytes.string(&rng),
                sessionId: HostileBytes.string(&rng), identity: HostileBytes.string(&rng), name: HostileBytes.string(&rng),
                detail: HostileBytes.string(&rng), statusCode: rng.below(3) == 0 ? nil : rng.below(1000),
                incident: HostileBytes.string(&rng))
        }
        let raws = (0..<count).map { _ in HostileBytes.bytes(&rng, maxParts: 40) }
        let batch = SpoolBatch(
            env: .prod, batchID: 1, kind: .event, firstSeq: 1, receivedAt: f.clock.nowMilliseconds(), storedBytes: 0, keys: keys,
            records: raws.map { $0[...] })
        var body = TabSeparatedWriter(capacity: 1 << 16)
        ClickHouseRows.records(batch, collector: CollectorID(3), into: &body)
        try await f.client.insert(
            into: "records", database: "bytes", columns: ClickHouseRows.recordColumns, format: "TabSeparated", rows: body.bytes)

        let answer = try await f.client.execute(
            "SELECT time, app, device, session, identity, name, detail, statusCode, incident, raw FROM \(identifier: "bytes").records ORDER BY id FORMAT TabSeparated"
        )
        let rows = try TabSeparatedRows(Array(answer.dropLast()), columns: 10).rows
        #expect(rows.count == count)
        for (i, row) in rows.prefix(count).enumerated() {
            let k = keys[i]
            #expect(try TabSeparatedRows.int(row[0]) == k.time)
            let strings = [row[1], row[2], row[3], row[4], row[5], row[6], row[8]].map(TabSeparatedRows.string)
            #expect(strings == [k.appId, k.deviceId, k.sessionId, k.identity, k.name, k.detail, k.incident], "record \(i)")
            #expect(try TabSeparatedRows.optionalInt(row[7]) == k.statusCode.map(Int64.init))
            #expect(TabSeparatedRows.bytes(row[9]) == raws[i], "record \(i)'s raw bytes")
        }
        await f.close()
    }

    /// Sends inserts to the real client, except the one holding `victim` (a device): that
    /// one waits until `othersFirst` other inserts were acknowledged, then fails once, as an
    /// insert in flight whose server went away would. Counts the rows ClickHouse was sent.
    final class FailOneInFlight: ClickHouseInserting {
        let client: ClickHouseClient
        let victim: [UInt8]
        let othersFirst: Int
        let acknowledged: AsyncStream<Void>
        let acknowledgement: AsyncStream<Void>.Continuation
        let failed = Mutex(false)
        let rowsSent = Mutex(0)

        init(client: ClickHouseClient, victim: String, othersFirst: Int) {
            self.client = client
            self.victim = Array(victim.utf8)
            self.othersFirst = othersFirst
            (acknowledged, acknowledgement) = AsyncStream.makeStream()
        }

        func insert(
            into table: String, database: String, columns: [String], format: StaticString, rows: [UInt8], settings: [(String, String)]
        ) async throws {
            if rows.firstRange(of: victim) != nil, !failed.withLock({ $0 }) {
                var seen = 0
                for await _ in acknowledged {
                    seen += 1
                    if seen == othersFirst { break }
                }
                failed.withLock { $0 = true }
                throw ClickHouseError.unreachable(endpoint: "test", detail: "the insert in flight was cut off")
            }
            try await client.insert(into: table, database: database, columns: columns, format: format, rows: rows, settings: settings)
            rowsSent.withLock { $0 += rows.split(separator: 0x0A).count }
            acknowledgement.yield()
        }
    }

    /// One batch of ten records per device `dev-0`, `dev-1`, ...; returns the batch ids.
    static func spoolTenRecordsPerDevice(_ f: ClickHouseStoreFixture, devices: Int) async throws -> ClosedRange<Int64> {
        let now = f.clock.nowMilliseconds()
        for b in 0..<devices {
            try await f.append((0..<10).map { i in Records.event(app: "com.a", device: "dev-\(b)", time: now - Int64(i)) })
        }
        let batchIDs = try #require(try await f.spool.unshippedBatchIDs(env: .prod))
        #expect(batchIDs.count == devices, "one batch per append")
        return batchIDs
    }

    /// A forwarder sending each ten-record batch as an insert of its own.
    static func batchPerInsertForwarder(
        _ f: ClickHouseStoreFixture, spool: any Spool, inserts: any ClickHouseInserting, concurrentInserts: Int
    ) -> ClickHouseForwarder {
        var tuning = ClickHouseForwarder.Tuning()
        tuning.maxInsertRecords = 10
        tuning.maxConcurrentInserts = concurrentInserts
        return ClickHouseForwarder(
            spool: spool, client: f.client, collector: CollectorID(3), tuning: tuning, clock: f.clock,
            metrics: NOOPMetricsHandler.instance, logger: Logger(label: "forwarder"), inserts: inserts)
    }

    @Test func aFailedInsertAmongSeveralInFlightIsRetriedAloneAndTheSpoolForgetsInOrder() async throws {
        let f = try await ClickHouseStoreFixture(database: "inflight", forwarding: false)
        let batchIDs = try await Self.spoolTenRecordsPerDevice(f, devices: 6)
        // The second insert fails once the five others, sent while it hangs, were acknowledged.
        let inserts = FailOneInFlight(client: f.client, victim: "dev-1", othersFirst: 5)
        let forwarder = Self.batchPerInsertForwarder(f, spool: f.spool, inserts: inserts, concurrentInserts: 3)
        let clickhouse = ClickHouseInspector(url: f.server.urls[0])
        let rows = "SELECT count(), uniqExact(id, collector), uniqExact(device) FROM inflight.records FORMAT TSV"

        await #expect(throws: ClickHouseError.self) { _ = try await forwarder.pass() }
        let afterFailure = try await clickhouse.query(rows)
        #expect(afterFailure == "50\t50\t5\n")
        // Only the first batch left the spool: the four after it wait behind the second.
        #expect(try await f.spool.unshippedBatchIDs(env: .prod) == batchIDs.lowerBound + 1...batchIDs.upperBound)

        #expect(try await forwarder.pass() == 50)
        #expect(try await f.spool.unshippedBatchIDs(env: .prod) == nil)
        // Without FINAL: no row was written twice, because none was sent twice.
        #expect(try await clickhouse.query(rows) == "60\t60\t6\n")
        #expect(inserts.rowsSent.withLock { $0 } == 60)
        await f.close()
    }

    /// Sends inserts to the real client and reports each acknowledgement.
    final class ReportingInserts: ClickHouseInserting {
        let client: ClickHouseClient
        let acknowledged: AsyncStream<Void>
        let acknowledgement: AsyncStream<Void>.Continuation

        init(client: ClickHouseClient) {
            self.client = client
            (acknowledged, acknowledgement) = AsyncStream.makeStream()
        }

        func insert(
            into table: String, database: String, columns: [String], format: StaticString, rows: [UInt8], settings: [(String, String)]
        ) async throws {
            try await client.insert(into: table, database: database, columns: columns, format: format, rows: rows, settings: settings)
            acknowledgement.yield()
        }
    }

    @Test func insertsKeepLaunchingWhileASpoolRemovalWaitsAndTheSpoolStillEmptiesInOrder() async throws {
        let f = try await ClickHouseStoreFixture(database: "removal", forwarding: false)
        let batchIDs = try await Self.spoolTenRecordsPerDevice(f, devices: 4)
        let spool = HeldRemovalSpool(f.spool)
        let inserts = ReportingInserts(client: f.client)
        // One insert at a time: the next launches only if the loop is not waiting for the removal.
        let forwarder = Self.batchPerInsertForwarder(f, spool: spool, inserts: inserts, concurrentInserts: 1)
        let pass = Task { try await forwarder.pass() }
        // A guard against a hang, not a timing assertion: if inserts stop behind the held
        // removal, the acknowledgements end here and the expectation below fails.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            inserts.acknowledgement.finish()
        }

        for await _ in spool.held { break }
        var acknowledged = 0
        for await _ in inserts.acknowledged {
            acknowledged += 1
            if acknowledged == 4 { break }
        }
        watchdog.cancel()
        #expect(acknowledged == 4, "every insert was acknowledged while the first removal was held")
        #expect(spool.removals.withLock { $0 } == [[batchIDs.lowerBound]], "one removal, held")
        spool.releaseRemoval()

        #expect(try await pass.value == 40)
        // The second removal took every batch acknowledged meanwhile, in one delete.
        #expect(spool.removals.withLock { $0 } == [[batchIDs.lowerBound], Array(batchIDs.lowerBound + 1...batchIDs.upperBound)])
        #expect(try await f.spool.unshippedBatchIDs(env: .prod) == nil)
        let rows = try await ClickHouseInspector(url: f.server.urls[0]).query(
            "SELECT count(), uniqExact(device) FROM removal.records FORMAT TSV")
        #expect(rows == "40\t4\n")
        await f.close()
    }
}
