import CoreMetrics
import Foundation
import StoreCore
import TelemetryModel
import TelemetryStore

/// A `SQLiteRecordStore` in a directory of its own with its group committer running, as the
/// daemon runs it (durable: every append waits for the fsync).
final class OpenStore {
    let store: SQLiteRecordStore
    let committer: Task<Void, Error>

    init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try SQLiteRecordStore(directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        committer = Task { [store] in try await store.committer.run() }
    }

    /// Appends one request's records, all to prod (the step measures the write, not routing).
    func append(_ records: [DecodedRecord]) async throws -> Int {
        let outcome = try await store.append(
            AppendRequest(kind: .event, receivedAt: sampleReceivedAt, records: [.prod: records]))
        return outcome[.prod, .event]?.stored ?? 0
    }

    func close() async {
        await store.committer.close()
        committer.cancel()
        _ = await committer.result
    }
}

/// One request's 1,000 events appended durably. Each operation gives the records fresh event
/// ids (the store keeps the first of each id and would otherwise count duplicates).
final class CommitStep: PreparedHotPath {
    let open: OpenStore
    var records: [DecodedRecord]
    var operation = 0
    var expectedRecords: Int { 1_000 }

    init(directory: URL) throws {
        open = try OpenStore(directory: directory)
        records = try decodedSample()
    }

    func run() async throws -> Int {
        operation += 1
        for i in records.indices { records[i].eventId = "c\(operation)-\(i)" }
        return try await open.append(records)
    }

    func finish() async { await open.close() }
}

/// One page of matches for a time range + app filter, over a store holding 20 requests
/// (20,000 events from 25 devices, 4 apps).
final class ScanStep: PreparedHotPath {
    static let requests = 20
    let open: OpenStore
    let query: RecordQuery
    let expectedRecords: Int

    init(directory: URL) async throws {
        open = try OpenStore(directory: directory)
        let decoder = TelemetryEventDecoder()
        var matching = 0
        let sample = SampleRequest()
        for batch in 0..<Self.requests {
            let records = try decoder.decode(body: SampleRequest(batch: batch).body, receivedAt: sampleReceivedAt).records
            matching += records.filter { $0.keys.appId == "com.contoso.outlook" }.count
            _ = try await open.append(records)
        }
        query = RecordQuery(
            kind: .event, env: .prod, app: "com.contoso.outlook", since: sample.firstTime, until: sample.lastTime,
            limit: 10_000)
        expectedRecords = matching
    }

    func run() async throws -> Int {
        try await open.store.query(query).records.count
    }

    func finish() async { await open.close() }
}
