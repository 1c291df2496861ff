import Foundation
import TestSupport
import Testing

/// `mamtelemetry-bench --data fleet`, the realistic-fleet generator: its records look like
/// a fleet (a device's events come together and its ids repeat, unlike the GUID-heavy
/// default), and the built daemon accepts every record it sends. The tests share one daemon:
/// each reads only the generator's own report of what it sent and what was accepted.
@Suite(.serialized, .sharedDaemon()) struct BenchFleetTests {
    /// The records of a `--dump`: one JSON object per line.
    static func dumped(_ dataSet: String, into directory: URL, daemon: DaemonProcess, file: String = "events.ndjson") async throws
        -> [[String: Any]]
    {
        let run = try await ControlProcess.run(
            ["--data", dataSet, "--dump", directory.path, "--dump-records", "2000", "--batch-size", "500"], daemon: daemon,
            binary: ControlProcess.benchBinary)
        #expect(run.status == 0, "\(run.errors)")
        let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
        return text.split(separator: "\n").map { parseJSON(Array($0.utf8)) }
    }

    @Test func fleetRecordsComeInDeviceBatchesWithReusedIds() async throws {
        let d = try SharedDaemon.daemon()
        let fleet = try await Self.dumped("fleet", into: d.dataDirectory.appendingPathComponent("fleet"), daemon: d)
        let guid = try await Self.dumped("guid", into: d.dataDirectory.appendingPathComponent("guid"), daemon: d)
        #expect(fleet.count == 2000 && guid.count == 2000)
        #expect(Set(fleet.compactMap { $0["eventId"] as? String }).count == 2000, "event ids stay unique")
        let devices = Set(fleet.compactMap { $0["deviceId"] as? String })
        let sessions = Set(fleet.compactMap { $0["sessionId"] as? String })
        // A device sends batches of 20 to 100 events: at most 100 devices for 2,000 events.
        #expect(devices.count >= 20 && devices.count <= 100, "\(devices.count) devices")
        #expect(sessions.count <= devices.count * 2, "\(sessions.count) sessions for \(devices.count) devices")
        #expect(Set(guid.compactMap { $0["deviceId"] as? String }).count > 1000, "the GUID-heavy set draws a device per record")
        // Consecutive records mostly share their device: batches, not independent draws.
        let sameDevice = zip(fleet, fleet.dropFirst()).filter { ($0["deviceId"] as? String) == ($1["deviceId"] as? String) }
        #expect(sameDevice.count > 1900, "\(sameDevice.count) neighbours share a device")
        let names = Dictionary(grouping: fleet.compactMap { $0["name"] as? String }, by: { $0 }).mapValues(\.count)
        #expect(Set(names.keys) == ["AppLaunch", "EnrollmentCall", "IntuneAction"], "\(names)")
    }

    @Test func theDaemonAcceptsEveryFleetRecord() async throws {
        let d = try SharedDaemon.daemon()
        let run = try await ControlProcess.run(
            [
                "--data", "fleet", "--duration", "1", "--concurrency", "2", "--batch-size", "200",
                "--pool-records", "20000", "--json",
            ], daemon: d, binary: ControlProcess.benchBinary)
        #expect(run.status == 0, "\(run.errors)")
        let report = parseJSON(Array(run.output.utf8))
        let records = report["records"] as? Int ?? 0
        #expect(records > 0, "\(run.output)")
        #expect(report["accepted"] as? Int == records, "\(run.output)")
        #expect((report["errors"] as? [String: Any])?.isEmpty == true, "\(run.output)")
    }

    /// The two data sets of other shapes: small events carry few fields over many devices;
    /// verbose logs come in one device's bursts of mostly multi-line verbose text ending in an
    /// error. The daemon accepts every record of both.
    @Test func theSmallAndVerboseDataSetsHaveTheirShapes() async throws {
        let d = try SharedDaemon.daemon()
        let small = try await Self.dumped("small", into: d.dataDirectory.appendingPathComponent("small"), daemon: d)
        #expect(small.count == 2000 && small.allSatisfy { $0.count <= 6 }, "few fields per event")
        #expect(Set(small.compactMap { $0["deviceId"] as? String }).count > 1900, "a device per record")
        #expect(Set(small.compactMap { $0["eventId"] as? String }).count == 2000)
        let verbose = try await Self.dumped(
            "verbose", into: d.dataDirectory.appendingPathComponent("verbose"), daemon: d, file: "logs.ndjson")
        #expect(verbose.count == 2000)
        let levels = Dictionary(grouping: verbose.compactMap { $0["level"] as? String }, by: { $0 }).mapValues(\.count)
        #expect((levels["verbose"] ?? 0) > 1400, "\(levels)")
        #expect((levels["error"] ?? 0) >= 2000 / 60 && (levels["error"] ?? 0) <= 2000 / 20 + 1, "one error per burst: \(levels)")
        #expect(verbose.filter { ($0["message"] as? String)?.contains("\n") == true }.count > 200, "multi-line messages")
        let sameDevice = zip(verbose, verbose.dropFirst()).filter { ($0["deviceId"] as? String) == ($1["deviceId"] as? String) }
        #expect(sameDevice.count > 1900, "bursts of one device")
        for (dataSet, logs) in [("small", "0"), ("verbose", "1")] {
            let run = try await ControlProcess.run(
                [
                    "--data", dataSet, "--logs-fraction", logs, "--duration", "1", "--concurrency", "2", "--batch-size", "200",
                    "--pool-records", "20000", "--json",
                ], daemon: d, binary: ControlProcess.benchBinary)
            let report = parseJSON(Array(run.output.utf8))
            #expect(run.status == 0 && (report["records"] as? Int ?? 0) > 0, "\(dataSet): \(run.output)\(run.errors)")
            #expect(report["accepted"] as? Int == report["records"] as? Int, "\(dataSet): \(run.output)")
        }
    }

    /// `--live --event-ids random`, the soak's shape of the SDK's ids: every event a fresh
    /// GUID, each stored once, in no order (about half of the neighbours ascend), where the
    /// numbered default sends ids that reach the retry-id index in order.
    @Test func liveRandomIdsAreFreshGUIDsInNoOrder() async throws {
        let d = try SharedDaemon.daemon()
        let run = try await ControlProcess.run(
            [
                "--live", "--event-ids", "random", "--logs-fraction", "0", "--rate", "2000", "--duration", "1",
                "--concurrency", "2", "--batch-size", "200", "--encoding", "identity", "--json",
            ], daemon: d, binary: ControlProcess.benchBinary)
        #expect(run.status == 0, "\(run.errors)")
        let report = parseJSON(Array(run.output.utf8))
        let records = report["records"] as? Int ?? 0
        #expect(records >= 400 && report["accepted"] as? Int == records, "\(run.output)")
        // The other tests' generators number their ids: only this run's are GUIDs.
        let ids = try await d.allEvents(extra: "&since=-15m").compactMap { $0["eventId"] as? String }.filter {
            $0.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil
        }
        #expect(ids.count == records, "\(ids.count) GUID ids stored for \(records) records sent")
        #expect(Set(ids).count == ids.count, "every id is fresh")
        let ascending = zip(ids, ids.dropFirst()).filter { $0 < $1 }.count
        #expect(ascending > ids.count / 4 && ascending < ids.count * 3 / 4, "\(ascending) of \(ids.count) neighbours ascend")
        let numbered = try await ControlProcess.run(
            ["--event-ids", "random", "--duration", "1"], daemon: d, binary: ControlProcess.benchBinary)
        #expect(numbered.status != 0 && numbered.errors.contains("--event-ids applies to --live only"), "\(numbered.errors)")
    }

    /// A remembered `mamtelemetryctl bench` command line fails with the program to run instead.
    @Test func theOperatorCLIPointsToTheLoadGenerator() throws {
        let run = try BundleFleet.system(ControlProcess.binary.path, ["bench", "--duration", "1", "--json"])
        #expect(run.status == 64, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("mamtelemetry-bench [options]"), "\(run.stderr)")
    }
}
