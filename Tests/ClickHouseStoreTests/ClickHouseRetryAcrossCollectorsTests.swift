import Foundation
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore

/// A client's retry through another collector (a load balancer resending a timed-out request)
/// against two collectors of one private 18.16: generated requests, new and repeated, whole
/// and in part, with ids in hostile spellings, go to either collector at random; an oracle
/// (keys compared as bytes) says which records are retries. Every answer must match it, and
/// ClickHouse must hold one row per record.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseRetryAcrossCollectorsTests {
    struct Key: Hashable {
        var kind: RecordKind
        var app: [UInt8]
        var eventId: [UInt8]
    }

    /// Ids that differ only where a careless comparison would fold them: canonically
    /// equivalent Unicode (equal as Swift strings, different bytes), case, trailing space,
    /// escapes and control bytes that TabSeparated and SQL literals must carry intact, and a
    /// NUL, where the embedded spool's identity ends.
    static let lookalikes = ["caf\u{E9}", "cafe\u{301}", "CAFÉ", "café ", "a\tb", "a\\tb", "a'b", "a\\'b", "\\N", "", "x\0y", "x"]

    static func eventId(_ rng: inout SeededRandom, serial: Int) -> String? {
        switch rng.below(6) {
        case 0: nil
        case 1: rng.pick(lookalikes)
        case 2: HostileBytes.string(&rng)
        default: "evt-\(serial)"
        }
    }

    static func fresh(_ rng: inout SeededRandom, count: Int, serial: inout Int, apps: [String]) -> [DecodedRecord] {
        (0..<count).map { _ in
            serial += 1
            var r = Records.event(app: rng.pick(apps), device: "dev-\(rng.below(5))", time: 1_767_225_600_000 + Int64(serial))
            r.setEventId(eventId(&rng, serial: serial))
            return r
        }
    }

    /// Two collectors (ids 1 and 2) on one private server, neither forwarding on its own, with
    /// a retry-check deadline no loaded test machine reaches: these tests are about which
    /// records are retries; a check that gives up is counted and asserted.
    static func twoCollectors(database: String) async throws -> (ClickHouseStoreFixture, ClickHouseStoreFixture) {
        var tuning = ClickHouseRecordStore.Tuning()
        tuning.retryCheckDeadline = .seconds(60)
        let a = try await ClickHouseStoreFixture(database: database, tuning: tuning, forwarding: false, collector: 1)
        let b = try await ClickHouseStoreFixture(database: database, tuning: tuning, forwarding: false, server: a.server, collector: 2)
        return (a, b)
    }

    @Test func aRetryThroughAnotherCollectorIsAnsweredDuplicateAndStoredOnce() async throws {
        let (a, b) = try await Self.twoCollectors(database: "retries")
        var rng = SeededRandom(seed: PropertyScale.seed(0x7265_7472))
        let apps = ["com.a", "com.b", "Com.A", "com.\u{E9}", "com.e\u{301}", "com.a\0b"]
        var history: [(RecordKind, [DecodedRecord])] = []
        var seen = Set<Key>()
        var rows = 0
        var serial = 0
        var crossCollectorRetries = 0
        for round in 0..<PropertyScale.cases(40) {
            var kind: RecordKind = rng.below(3) == 0 ? .log : .event
            var request: [DecodedRecord]
            let collector = rng.below(2)
            if let (k, old) = history.isEmpty || rng.below(2) == 0 ? nil : rng.pick(history) {
                // A retry: the whole request or part of it, sometimes with new records.
                kind = k
                request = old.filter { _ in rng.below(4) != 0 }
                request += Self.fresh(&rng, count: rng.below(3), serial: &serial, apps: apps)
                crossCollectorRetries += 1
            } else {
                request = Self.fresh(&rng, count: 1 + rng.below(30), serial: &serial, apps: apps)
                if rng.below(4) == 0, let first = request.first { request.append(first) }  // repeated within the request
            }
            var expected: [Int] = []
            var added = Set<Key>()
            for (i, r) in request.enumerated() {
                guard let id = r.eventId else {
                    rows += 1
                    continue
                }
                // Bytes up to a NUL, as the embedded spool keeps them (see RetryIdentity).
                let key = Key(
                    kind: kind, app: Array(Array(r.keys.appId.utf8).prefix { $0 != 0 }), eventId: Array(Array(id.utf8).prefix { $0 != 0 }))
                if seen.contains(key) || added.contains(key) { expected.append(i) } else { added.insert(key) }
            }
            let target = collector == 0 ? a : b
            let outcomes = try await target.store.append(
                AppendRequest(kind: kind, receivedAt: target.clock.nowMilliseconds(), records: [.prod: request]))
            let outcome = outcomes[.prod, kind] ?? AppendOutcome(stored: 0, duplicates: 0, ids: [])
            #expect(
                outcome.duplicateIndices == expected,
                "round \(round) kind \(kind) to \(collector): \(request.map { ($0.keys.appId, $0.eventId.map { Array($0.utf8) }) })")
            #expect(outcome.duplicates == expected.count, "round \(round)")
            #expect(outcome.stored == request.count - expected.count, "round \(round)")
            seen.formUnion(added)
            rows += added.count
            if !request.isEmpty { history.append((kind, request)) }
            // Both collectors ship before the next request: the retry arrives after the original
            // reached ClickHouse, the case this check is for.
            try await a.shipNow()
            try await b.shipNow()
        }
        #expect(crossCollectorRetries > 0)
        let stored = try await a.server.query("SELECT count() FROM retries.records FINAL")
        #expect(Int(stored.trimmingCharacters(in: .whitespacesAndNewlines)) == rows)
        let ids = try await a.server.query("SELECT count() FROM retries.event_ids FINAL")
        #expect(Int(ids.trimmingCharacters(in: .whitespacesAndNewlines)) == seen.count)
        for f in [a, b] { #expect(try f.metrics.expectCounter(MetricName.clickHouseRetryCheckSkipped.rawValue).totalValue == 0) }
        await b.close()
        await a.close()
    }

    /// Requests that reach a collector at once share one lookup (``LookupBatch``), which asks
    /// for every app and id of all of them together: each request must still get only its
    /// own records' answers. Generated: originals stored through one collector, then many
    /// concurrent requests through the other, each mixing retries with new records that
    /// cross an original's app with another original's id (found by a merged lookup, yet new).
    @Test func concurrentRequestsShareALookupAndGetOnlyTheirOwnAnswers() async throws {
        let (a, b) = try await Self.twoCollectors(database: "merged")
        var rng = SeededRandom(seed: PropertyScale.seed(0x6d65_7267))
        let apps = ["com.a", "com.b", "com.c"]
        func record(_ app: String, _ id: String, _ kind: RecordKind) -> DecodedRecord {
            var r =
                kind == .event
                ? Records.event(app: app, device: "d", time: 1) : Records.log(app: app, device: "d", level: .info, time: 1, message: "m")
            r.setEventId(id)
            return r
        }
        var originals: [RecordKind: [(app: String, id: String)]] = [:]
        for kind in [RecordKind.event, .log] {
            let batch = (0..<60).map { i in (app: apps[i % apps.count], id: "\(kind)-\(i)") }
            originals[kind] = batch
            let stored = try await a.store.append(
                batch.map { record($0.app, $0.id, kind) }, kind: kind, env: .prod, receivedAt: 1, incident: nil)
            #expect(stored.stored == batch.count)
        }
        try await a.shipNow()
        // Each request: some originals again (retries), and some (app, id) pairs that cross one
        // original's app with another's id, which ClickHouse does not hold.
        var requests: [(kind: RecordKind, records: [DecodedRecord], duplicates: [Int])] = []
        for _ in 0..<PropertyScale.cases(40) {
            let kind: RecordKind = rng.below(2) == 0 ? .event : .log
            let pool = originals[kind]!
            var records: [DecodedRecord] = []
            var duplicates: [Int] = []
            for _ in 0..<(1 + rng.below(8)) {
                let original = rng.pick(pool)
                if rng.below(2) == 0 {
                    duplicates.append(records.count)
                    records.append(record(original.app, original.id, kind))
                } else {
                    records.append(record(original.app, rng.pick(pool.filter { $0.app != original.app }).id, kind))
                }
            }
            requests.append((kind, records, duplicates))
        }
        // A crossed pair sent by two requests is rightly a duplicate for the later one (the
        // collector's spool knows it): only pairs sent once are asserted new.
        var sends: [String: Int] = [:]
        for request in requests {
            for r in request.records { sends["\(request.kind) \(r.keys.appId) \(r.eventId!)", default: 0] += 1 }
        }
        let outcomes = try await withThrowingTaskGroup(of: (Int, AppendOutcome).self) { group in
            for (n, request) in requests.enumerated() {
                group.addTask {
                    (n, try await b.store.append(request.records, kind: request.kind, env: .prod, receivedAt: 2, incident: nil))
                }
            }
            return try await group.reduce(into: [Int: AppendOutcome]()) { $0[$1.0] = $1.1 }
        }
        var retries = 0
        for (n, request) in requests.enumerated() {
            let outcome = try #require(outcomes[n])
            let found = Set(outcome.duplicateIndices)
            for (i, r) in request.records.enumerated() {
                let isOriginal = originals[request.kind]!.contains { $0.app == r.keys.appId && $0.id == r.eventId }
                if request.duplicates.contains(i) {
                    #expect(found.contains(i), "request \(n): a retry of \(r.keys.appId) \(r.eventId!) was stored")
                    retries += 1
                } else if !isOriginal, sends["\(request.kind) \(r.keys.appId) \(r.eventId!)"] == 1 {
                    #expect(!found.contains(i), "request \(n): \(r.keys.appId) \(r.eventId!) is new, answered duplicate")
                }
            }
        }
        #expect(retries > 0)
        #expect(try b.metrics.expectCounter(MetricName.clickHouseRetryCheckSkipped.rawValue).totalValue == 0)
        await b.close()
        await a.close()
    }

    /// Generated id sets: the chunks hold every id once, and none passes the byte bound
    /// unless a single id does.
    /// A lookup the collector gave up on must not go on in the server: the check's settings
    /// make ClickHouse itself end a statement that would otherwise never finish (a count over
    /// the endless `system.numbers`), with its TIMEOUT_EXCEEDED (159), before the client's own
    /// request timeout would.
    @Test func theServerEndsALookupPastItsDeadline() async throws {
        #expect(ClickHouseRetryCheck.lookupSettings(deadline: .milliseconds(500)).first?.1 == "1")
        #expect(ClickHouseRetryCheck.lookupSettings(deadline: .seconds(2)).first?.1 == "2")
        #expect(ClickHouseRetryCheck.lookupSettings(deadline: .milliseconds(2001)).first?.1 == "3")
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let client = ClickHouseClient(configuration: .init(endpoints: server.urls, requestTimeoutSeconds: 60))
        defer { Task { try? await client.shutdown() } }
        do {
            _ = try await client.execute(
                "SELECT count() FROM system.numbers WHERE sipHash64(number) = 1",
                settings: ClickHouseRetryCheck.lookupSettings(deadline: .milliseconds(500)))
            Issue.record("an endless statement finished")
        } catch let ClickHouseError.server(_, _, code, message) {
            #expect(code == 159, "\(message)")
        }
    }

    @Test func idChunksCoverEveryIdWithinTheBound() {
        var rng = SeededRandom(seed: PropertyScale.seed(0x6368_756e))
        for _ in 0..<PropertyScale.cases(100) {
            let ids = Set(
                (0..<rng.below(300)).map { _ in
                    [UInt8](repeating: UInt8(97 + rng.below(26)), count: rng.below(rng.below(10) == 0 ? 40_000 : 600))
                        + Array("\(rng.next())".utf8)
                })
            let chunks = ClickHouseRetryCheck.idChunks(ids)
            let flat = chunks.flatMap { $0 }.map { Array($0.utf8) }
            #expect(flat.count == ids.count && Set(flat) == ids)
            for chunk in chunks {
                #expect(!chunk.isEmpty)
                #expect(chunk.count == 1 || chunk.reduce(0) { $0 + $1.utf8.count } <= ClickHouseRetryCheck.maxIDBytesPerStatement)
            }
        }
    }

    /// A retry whose ids need several statements (long ids in a large request) is recognised
    /// whole.
    @Test func aRetryWithMoreIdsThanOneStatementCarriesIsRecognisedWhole() async throws {
        let (a, b) = try await Self.twoCollectors(database: "longids")
        let pad = String(repeating: "p", count: 1_000)
        let records = (0..<400).map { i in
            var r = Records.event(app: "com.a", device: "d", time: Int64(i))
            r.setEventId("\(i)-\(pad)")
            return r
        }
        #expect(ClickHouseRetryCheck.idChunks(Set(records.map { Array($0.eventId!.utf8) })).count > 2)
        #expect(try await a.store.append(records, kind: .event, env: .prod, receivedAt: 1, incident: nil).stored == 400)
        try await a.shipNow()
        let retry = try await b.store.append(records, kind: .event, env: .prod, receivedAt: 2, incident: nil)
        #expect(retry.stored == 0 && retry.duplicateIndices == Array(0..<400))
        await b.close()
        await a.close()
    }

    /// `clickhouse.recogniseRetries: false` (a load balancer that keeps a client on one
    /// collector): nothing is asked, so a retry through another collector is stored again;
    /// one through the same collector is still recognised by its spool.
    @Test func withTheCheckOffOnlyTheSameCollectorRecognisesARetry() async throws {
        var tuning = ClickHouseRecordStore.Tuning()
        tuning.recogniseRetries = false
        let a = try await ClickHouseStoreFixture(database: "nocheck", tuning: tuning, forwarding: false, collector: 1)
        let b = try await ClickHouseStoreFixture(database: "nocheck", tuning: tuning, forwarding: false, server: a.server, collector: 2)
        let records = (0..<5).map { i in
            var r = Records.event(app: "com.a", device: "d", time: Int64(i))
            r.setEventId("e-\(i)")
            return r
        }
        #expect(try await a.store.append(records, kind: .event, env: .prod, receivedAt: 1, incident: nil).stored == 5)
        try await a.shipNow()
        #expect(try await a.store.append(records, kind: .event, env: .prod, receivedAt: 2, incident: nil).duplicates == 5)
        #expect(try await b.store.append(records, kind: .event, env: .prod, receivedAt: 2, incident: nil).stored == 5)
        #expect(!b.metrics.counters.contains { $0.label == MetricName.clickHouseRetryCheckSkipped.rawValue })
        await b.close()
        await a.close()
    }

    @Test func anUnreachableClickHouseDoesNotHoldIngestBack() async throws {
        let f = try await ClickHouseStoreFixture(database: "retrydown", forwarding: false)
        try f.server.stop(timeoutSeconds: 3)
        var first = Records.event(app: "com.d", device: "d", time: 1)
        first.setEventId("e-1")
        var second = Records.event(app: "com.d", device: "d", time: 2)
        second.setEventId("e-2")
        // Stored, not refused: the spool is what a 2xx promises; the check fails open.
        let outcome = try await f.store.append([first], kind: .event, env: .prod, receivedAt: 1000, incident: nil)
        #expect(outcome.stored == 1)
        #expect(try f.metrics.expectCounter(MetricName.clickHouseRetryCheckSkipped.rawValue).totalValue == 1)
        // Within the pause after a miss nothing is asked; the request is counted as skipped.
        let again = try await f.store.append([second, first], kind: .event, env: .prod, receivedAt: 1001, incident: nil)
        #expect(again.stored == 1 && again.duplicateIndices == [1])
        #expect(try f.metrics.expectCounter(MetricName.clickHouseRetryCheckSkipped.rawValue).totalValue == 2)
        #expect(try await f.spool.depth(env: .prod).records == 2)
        await f.close()
    }
}
