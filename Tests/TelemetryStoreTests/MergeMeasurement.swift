import Foundation
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// Not a check: the figures BENCHMARKS.md quotes for a compaction merge (its throughput and
/// stored bytes on full-size runs; its heap peak when run under heaptrack). Runs only with
/// `MAM_MERGE_MEASURE=<runs>`:
/// `MAM_MERGE_MEASURE=3 swift test --skip-build --filter MergeMeasurement`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["MAM_MERGE_MEASURE"] != nil))
struct MergeMeasurement {
    /// A fleet's event of about 500 bytes: several GUIDs, a dozen apps, attributes.
    static func event(_ n: Int, _ random: inout SeededRandom, devices: [String], now: Int64) -> DecodedRecord {
        let app = "com.contoso.app\(min(random.below(16), random.below(16)))"
        let device = random.pick(devices)
        let session = CompactionTests.guid(&random)
        let account = CompactionTests.guid(&random)
        let time = now - 3_600_000 + Int64(n * 7)
        let name = random.pick(["AppLaunch", "EnrollmentCall", "IntuneAction"])
        let detail = random.pick(["MDM", "MAM-WE", "enrollment", "policyCheckIn", "selectiveWipe"])
        let json =
            #"{"time":"\#(Timestamp.format(milliseconds: time))","name":"\#(name)","appId":"\#(app)","deviceId":"\#(device)","sessionId":"\#(session)","data":{"platform":"\#(random.pick(["iOS", "Android"]))","appVersion":"4.\#(random.below(30)).\#(random.below(9))","sdkVersion":"19.6.\#(random.below(4))","identity":"user\#(random.below(5000))@contoso.com","accountId":"\#(account)","tenantId":"72f988bf-86f1-41af-91ab-2d7cd011db47","operation":"\#(detail)","durationMs":\#(random.below(3000)),"statusCode":\#(random.pick([200, 200, 200, 401, 500])),"note":"step \#(random.below(1_000_000)) of the \#(random.pick(["launch", "check-in", "wipe", "lookup"])) flow"}}"#
        return DecodedRecord(
            json: Array(json.utf8),
            keys: RecordKeys(
                time: time, appId: app, deviceId: device, sessionId: session, identity: "user@contoso.com", name: name, detail: detail,
                statusCode: 200, durationMs: Double(random.below(3000))),
            flags: .unspecified, eventId: nil)
    }

    @Test func fullSizeRuns() async throws {
        let runs = ProcessInfo.processInfo.environment["MAM_MERGE_MEASURE"].flatMap(Int.init) ?? 1
        for run in 0..<max(runs, 1) {
            let now: Int64 = 1_800_000_000_000
            let f = try CompactionTests.Fixture(now: now)
            var random = SeededRandom(seed: 77)
            let devices = (0..<2_000).map { _ in CompactionTests.guid(&random) }
            var n = 0
            // 48k events in batches of 100: three full runs of 16,384 records.
            for batch in 0..<480 {
                let records = (0..<100).map { _ in
                    n += 1
                    return Self.event(n, &random, devices: devices, now: now)
                }
                _ = try await f.store.append(records, kind: .event, env: .prod, receivedAt: now - 600_000 + Int64(batch), incident: nil)
            }
            let start = ContinuousClock.now
            let pass = try await f.store.compactor.compactOnce()
            let seconds = (ContinuousClock.now - start) / .seconds(1)
            print(
                "merge-measure run \(run): \(pass.segments) segments, \(pass.records) records in \(String(format: "%.3f", seconds)) s"
                    + " (\(Int(Double(pass.records) / seconds)) records/s), stored \(pass.bytesBefore) -> \(pass.bytesAfter) bytes")
            await f.close()
        }
    }
}
