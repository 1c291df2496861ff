import Foundation
import Metrics
import TelemetryModel
import TelemetryStore
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
            guard case .inFlightFull(let limit, let inflating)? = await Self.refusal({ try await admission.admit(bytes: 50) { _ in } })
            else {
                Issue.record("160 bytes in flight were admitted past maxInFlightBytes=100")
                return
            }
            #expect(limit == 100 && !inflating)
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
                    guard case .inFlightFull(limit: 100, whileInflating: true) = error else {
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
}
