import Foundation
import Metrics
import TelemetryModel
import TelemetryStore
import TestSupport
import Testing

/// `mamtelemetryctl events --device …` died on a stored duration of 1e19 (and a page holding a
/// lone surrogate could not be read at all): records as an older version stored them are
/// planted in a data directory directly, past ingest, and the built daemon serves them to the
/// built CLI, whose table, JSON and NDJSON output and bundle download all complete.
@Suite(.serialized) struct StoredPoisonCLITests {
    @Test func theCommandLineRendersWhatAnOlderVersionStored() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-poison-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let store = try SQLiteRecordStore(directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let committer = store.committer
        let running = Task { try await committer.run() }
        _ = try await store.append(StoredPoison.events(around: now - 60_000), kind: .event, env: .prod, receivedAt: now, incident: nil)
        await committer.close()
        running.cancel()

        let d = try DaemonProcess(dataDirectory: directory)
        try await d.start()
        defer { d.cleanUp() }
        let table = try await ControlProcess.run(["events", "--device", StoredPoison.device, "--since", "-1h"], daemon: d)
        #expect(table.status == 0, "\(table.errors)")
        #expect(table.output.contains("EnrollmentCall") && table.output.contains("1e+19ms"), "\(table.output)")
        for format in ["json", "ndjson"] {
            let out = try await ControlProcess.run(
                ["events", "--device", StoredPoison.device, "--since", "-1h", "--output", format], daemon: d)
            #expect(out.status == 0, "\(format): \(out.errors)")
        }
        let archive = directory.appendingPathComponent("poison.zip").path
        let bundle = try await ControlProcess.run(["bundle", "--device", StoredPoison.device, "--since", "-1h", "-o", archive], daemon: d)
        #expect(bundle.status == 0 && bundle.output.contains("checksums: OK"), "\(bundle.output)\(bundle.errors)")
    }
}
