import Foundation
import Metrics
import Synchronization
import TelemetryModel
import TelemetryStore
import TestSupport
import Testing

@testable import TelemetryServer

/// Backpressure at the door: the bytes ingest holds in memory at once and the records
/// waiting for the committer are bounded; past either bound a request is refused (retry
/// later) before it is read, and every reservation is given back when its request ends.
@Suite struct IngestAdmissionTests {
    /// A store whose committer is not running, so appends stay queued until `drain`.
    struct Parked {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admission-\(UUID().uuidString)")
        let store: SQLiteRecordStore

        init() throws {
            store = try SQLiteRecordStore(directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        }

        func drain() async {
            await store.committer.close()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func refusal<T>(_ body: () async throws -> T) async -> IngestRefusal? {
        do {
            _ = try await body()
            return nil
        } catch let refusal as IngestRefusal {
            return refusal
        } catch {
            Issue.record("not a refusal: \(error)")
            return nil
        }
    }

    @Test func inFlightBytesAreBoundedAndGivenBack() async throws {
        let parked = try Parked()
        let admission = IngestAdmission(
            limits: .init(maxInFlightBytes: 100, maxQueuedRecords: 1000), commitQueue: parked.store.committer, disk: nil,
            metrics: NOOPMetricsHandler.instance)
        // An idle daemon takes a body larger than the whole budget: it is never refused forever.
        #expect(await Self.refusal { try await admission.admit(bytes: 500) { _ in } } == nil)
        try await admission.admit(bytes: 60) { _ in
            guard case .inFlightFull(let limit, let stage)? = await Self.refusal({ try await admission.admit(bytes: 50) { _ in } })
            else {
                Issue.record("160 bytes in flight were admitted past maxInFlightBytes=100")
                return
            }
            #expect(limit == 100 && stage == .atTheDoor)
            #expect(await Self.refusal { try await admission.admit(bytes: 40) { _ in } } == nil, "60 + 40 fits")
        }
        // Everything was given back, the refused request's reservation included.
        #expect(await Self.refusal { try await admission.admit(bytes: 100) { _ in } } == nil)
        await parked.drain()
    }

    /// The oldest request in flight may always grow as its body inflates; a younger one
    /// that would pass the budget is refused mid-inflate, naming the limit.
    @Test func onlyTheOldestRequestMayGrowPastTheBudget() async throws {
        let parked = try Parked()
        let admission = IngestAdmission(
            limits: .init(maxInFlightBytes: 100, maxQueuedRecords: 1000), commitQueue: parked.store.committer, disk: nil,
            metrics: NOOPMetricsHandler.instance)
        try await admission.admit(bytes: 10) { oldest in
            try await admission.admit(bytes: 10) { younger in
                #expect(throws: Never.self) { try younger.grow(by: 70) }
                do throws(IngestRefusal) {
                    try younger.grow(by: 20)
                    Issue.record("the younger request grew past maxInFlightBytes=100")
                } catch {
                    guard case .inFlightFull(limit: 100, .inflating) = error else {
                        Issue.record("unexpected refusal \(error)")
                        return
                    }
                }
                #expect(throws: Never.self) { try oldest.grow(by: 1000) }
            }
        }
        #expect(await Self.refusal { try await admission.admit(bytes: 100) { _ in } } == nil, "the grown reservations were given back")
        await parked.drain()
    }

    @Test func aFullCommitQueueRefusesNewRequests() async throws {
        let parked = try Parked()
        let admission = IngestAdmission(
            limits: .init(maxInFlightBytes: 1 << 20, maxQueuedRecords: 3), commitQueue: parked.store.committer, disk: nil,
            metrics: NOOPMetricsHandler.instance)
        let store = parked.store
        let records = (0..<5).map { i in
            DecodedRecord(
                json: Array(#"{"name":"AppLaunch","appId":"com.q","eventId":"q\#(i)"}"#.utf8),
                keys: RecordKeys(time: Int64(i), appId: "com.q", deviceId: "d", identity: "", name: "AppLaunch", statusCode: nil),
                flags: .unspecified, eventId: "q\(i)")
        }
        let waiting = Task { try await store.append(records, kind: .event, env: .prod, receivedAt: 0, incident: nil) }
        while store.committer.queuedRecords < 5 { try await Task.sleep(for: .milliseconds(5)) }
        guard case .queueFull(let limit)? = await Self.refusal({ try await admission.admit(bytes: 1) { _ in } }) else {
            Issue.record("a request was admitted with 5 records queued past maxQueuedRecords=3")
            await parked.drain()
            return
        }
        #expect(limit == 3)
        await parked.drain()
        #expect(try await waiting.value.stored == 5, "the queued request is committed, not lost")
    }

    /// A request that does not fit waits at the door, in arrival order, and is admitted as
    /// soon as the requests ahead give their bytes back: a daemon behind its clients holds
    /// the budget, not every connection's body, and answers no 503 for a short burst.
    @Test func aRequestThatDoesNotFitWaitsForRoomInArrivalOrder() async throws {
        let parked = try Parked()
        let admission = IngestAdmission(
            limits: .init(maxInFlightBytes: 100, maxQueuedRecords: 1000, maxWait: .seconds(600)), commitQueue: parked.store.committer,
            disk: nil, metrics: NOOPMetricsHandler.instance)
        final class Order: Sendable {
            let list = Mutex<[String]>([])
            func append(_ step: String) { list.withLock { $0.append(step) } }
            var steps: [String] { list.withLock { $0 } }
        }
        let order = Order()
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await admission.admit(bytes: 90) { _ in
                for await _ in release { break }
                order.append("holder done")
            }
        }
        while admission.inFlightBytes < 90 { await Task.yield() }
        // 96 bytes: once the holder is done the first is admitted and the second (5) does not
        // fit beside it, so the bodies run in admission order (with 60, both were admitted at
        // once and their bodies raced: a CI run saw "second" before "first").
        let first = Task { try await admission.admit(bytes: 96) { _ in order.append("first") } }
        while admission.waitingCount < 1 { await Task.yield() }
        let second = Task { try await admission.admit(bytes: 5) { _ in order.append("second") } }
        while admission.waitingCount < 2 { await Task.yield() }
        // 5 bytes would fit beside the holder, but the line is kept: the second waits too.
        #expect(order.steps.isEmpty)
        releaser.yield()
        try await holder.value
        try await first.value
        try await second.value
        #expect(order.steps == ["holder done", "first", "second"])
        #expect(admission.waitingCount == 0)
        await parked.drain()
    }

    /// Waiting is bounded: past `maxWait` the request is refused at the door, naming the
    /// limit, and leaves the line; a client that goes away leaves it at once.
    @Test func aWaitingRequestIsRefusedAfterMaxWaitOrWhenCancelled() async throws {
        let parked = try Parked()
        let admission = IngestAdmission(
            limits: .init(maxInFlightBytes: 100, maxQueuedRecords: 1000, maxWait: .milliseconds(20)), commitQueue: parked.store.committer,
            disk: nil, metrics: NOOPMetricsHandler.instance)
        try await admission.admit(bytes: 100) { _ in
            guard case .inFlightFull(100, .atTheDoor)? = await Self.refusal({ try await admission.admit(bytes: 1) { _ in } }) else {
                Issue.record("a request waited past maxWait or was admitted past the budget")
                return
            }
            #expect(admission.waitingCount == 0)
        }
        let patient = IngestAdmission(
            limits: .init(maxInFlightBytes: 100, maxQueuedRecords: 1000, maxWait: .seconds(600)), commitQueue: parked.store.committer,
            disk: nil, metrics: NOOPMetricsHandler.instance)
        try await patient.admit(bytes: 100) { _ in
            let waiting = Task { try await patient.admit(bytes: 1) { _ in } }
            while patient.waitingCount < 1 { await Task.yield() }
            waiting.cancel()
            guard case .inFlightFull(100, .atTheDoor)? = await Self.refusal({ try await waiting.value }) else {
                Issue.record("a cancelled request was not refused")
                return
            }
            #expect(patient.waitingCount == 0)
        }
        await parked.drain()
    }

    /// The decoded records are charged too: a body whose wire bytes fit beside an older
    /// request but whose records do not is refused before anything is stored, naming the
    /// limit; the oldest request's records are always taken.
    @Test func decodedRecordsAreChargedToTheBudget() async throws {
        let parked = try Parked()
        let admission = IngestAdmission(
            limits: .init(maxInFlightBytes: 4000, maxQueuedRecords: 1000), commitQueue: parked.store.committer, disk: nil,
            metrics: NOOPMetricsHandler.instance)
        var random = SeededRandom(seed: 28)
        let records = (0..<10).map { i in
            let device = (0..<36).map { _ in "0123456789abcdef".randomElement(using: &random)! }
            let json = #"{"name":"AppLaunch","appId":"com.contoso.outlook","deviceId":"\#(String(device))","eventId":"e\#(i)"}"#
            return DecodedRecord(
                json: Array(json.utf8),
                keys: RecordKeys(time: Int64(i), appId: "com.contoso.outlook", deviceId: String(device), name: "AppLaunch"),
                flags: .unspecified, eventId: "e\(i)")
        }
        let held = records.reduce(0) { $0 + $1.heldBytes }
        // Each record holds its JSON, its device id's text and its own slot at least.
        #expect(held >= records.reduce(0) { $0 + $1.json.count + 36 + MemoryLayout<DecodedRecord>.stride })
        try await admission.admit(bytes: 1000) { oldest in
            try await admission.admit(bytes: 100) { younger in
                do throws(IngestRefusal) {
                    try younger.holdDecoded(4000 - 1100 + 1)
                    Issue.record("decoded records were held past maxInFlightBytes=4000")
                } catch {
                    guard case .inFlightFull(limit: 4000, .decoded) = error else {
                        Issue.record("unexpected refusal \(error)")
                        return
                    }
                }
                #expect(throws: Never.self) { try oldest.holdDecoded(held) }
            }
        }
        await parked.drain()
    }
}
