import Foundation
import TestSupport
import Testing

/// Started by hand (`./scripts/run.sh`, no unit and its `UMask=`) from a shell with umask
/// 022, the daemon used to leave its stores world-readable. Whatever it creates under the
/// data directory is owner-only: the stores and their WAL files, the control database,
/// the pseudonym key, the first admin token and the bundle spool directory.
@Suite(.serialized) struct DataDirectoryModeTests {
    @Test func everythingTheDaemonCreatesIsOwnerOnlyUnderUmask022() async throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let event = #"{"name":"AppLaunch","appId":"com.contoso.modes","deviceId":"d1","identity":"jane@contoso.com"}"#
        #expect(try await d.post("/v1/telemetry", body: Array(event.utf8)).0 == 200)
        let log = #"{"level":"verbose","message":"signed in as jane@contoso.com","deviceId":"d1"}"#
        #expect(try await d.post("/v1/logs?app=com.contoso.modes", body: Array(log.utf8)).0 == 200)
        let (status, _) = try await d.get("/v1/bundles?device=d1&since=-1d")
        #expect(status == 200)

        var seen: Set<String> = []
        // The directory itself and the test's own log file are the test's, made with its umask.
        let own: Set<String> = [d.dataDirectory.path, d.logFile.path]
        let walker = FileManager.default.enumerator(atPath: d.dataDirectory.path)
        while let relative = walker?.nextObject() as? String {
            let path = d.dataDirectory.appendingPathComponent(relative).path
            guard !own.contains(path) else { continue }
            var info = stat()
            #expect(lstat(path, &info) == 0)
            seen.insert(relative)
            #expect(info.st_mode & 0o077 == 0, "\(relative) is \(String(info.st_mode & 0o7777, radix: 8))")
        }
        for name in [
            "prod/records.sqlite", "prod/records.sqlite-wal", "prod/records.sqlite-shm", "ppe/records.sqlite", "control.sqlite",
            "control.sqlite-wal", "pseudonym.key", "admin.token", "tmp", "prod",
        ] {
            #expect(seen.contains(name), "\(name) was not found: \(seen.sorted())")
        }
    }
}
