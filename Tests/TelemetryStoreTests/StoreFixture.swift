import Foundation
import Logging
import Metrics
import TelemetryModel

@testable import TelemetryStore

/// Wall time pinned at one instant, for retention cut-offs; durations run on the real
/// monotonic clock.
struct FixedClock: WallClock {
    let milliseconds: Int64
    init(_ milliseconds: Int64) { self.milliseconds = milliseconds }
    func nowMilliseconds() -> Int64 { milliseconds }
    func monotonicNow() -> ContinuousClock.Instant { .now }
}

/// A real SQLite store in a temporary directory with its committer running.
final class StoreFixture: @unchecked Sendable {
    let directory: URL
    let store: SQLiteRecordStore
    private var committerTask: Task<Void, Error>?

    init(configuration: StoreConfiguration = .init()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
        store = try SQLiteRecordStore(
            directory: directory, configuration: configuration, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let committer = store.committer
        committerTask = Task { try await committer.run() }
    }

    func close() async {
        await store.committer.close()
        committerTask?.cancel()
        try? FileManager.default.removeItem(at: directory)
    }

    static func event(
        app: String = "com.app", device: String = "d1", identity: String = "", name: String = "AppLaunch", time: Int64,
        eventId: String? = nil, statusCode: Int? = nil
    ) -> DecodedRecord {
        var w = JSONWriter()
        w.beginObject()
        w.field("name", name)
        w.field("appId", app)
        w.field("deviceId", device)
        if !identity.isEmpty { w.field("identity", identity) }
        w.field("time", Timestamp.format(milliseconds: time))
        if let eventId { w.field("eventId", eventId) }
        w.endObject()
        return DecodedRecord(
            json: w.bytes,
            keys: RecordKeys(time: time, appId: app, deviceId: device, identity: identity.lowercased(), name: name, statusCode: statusCode),
            flags: .unspecified, eventId: eventId)
    }
}
