import Foundation
import TestSupport
import Testing

/// Disk high-water on a small tmpfs data directory: past the mark ingest answers 507 naming
/// it, queries still work, and ingest resumes by itself once space returns. With keep-free
/// retention off, the space must come back from elsewhere (the operator, here); with it on,
/// see `DiskReclaimTests`.
@Suite(.serialized) struct DiskHighWaterTests {
    static func event(_ id: String) -> [UInt8] {
        Array(#"{"name":"AppLaunch","appId":"com.contoso.disk","deviceId":"d","eventId":"\#(id)","data":{"managementType":"MDM"}}"#.utf8)
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func highWaterRefusesWith507AndRecoversWhenSpaceReturns() async throws {
        let disk = try SmallDisk(megabytes: 64)
        defer { disk.unmount() }
        let mountPoint = disk.mountPoint
        let d = try DaemonProcess(
            dataDirectory: mountPoint.appendingPathComponent("data"),
            // Keep-free retention off: this is the case where only the operator can free space.
            extraArguments: ["--disk-min-free-bytes", "33554432", "--disk-min-free-ratio", "0", "--disk-keep-free-bytes", "0"])
        try await d.start()
        defer { d.kill() }
        var (s, b, _) = try await d.post("/v1/telemetry", body: Self.event("before"))
        #expect(s == 200, "\(String(decoding: b, as: UTF8.self))")

        // Ballast leaves about 20 MiB free: below the 32 MiB mark.
        let ballast = mountPoint.appendingPathComponent("ballast")
        try Data(count: disk.freeBytes - (20 << 20)).write(to: ballast)
        var refusal: (Int, [UInt8], String?)?
        let deadline = ContinuousClock.now + .seconds(6)
        while ContinuousClock.now < deadline {
            let (status, body, headers) = try await d.post("/v1/telemetry", body: Self.event("during-\(UUID().uuidString)"))
            if status == 507 {
                refusal = (status, body, headers.first(name: "Retry-After"))
                break
            }
            #expect(status == 200)
            try await Task.sleep(for: .milliseconds(200))
        }
        let (status, body, retryAfter) = try #require(refusal, "ingest was never refused after the disk crossed the mark")
        #expect(status == 507)
        let message = ((parseJSON(body)["error"] as? [String: Any])?["message"] as? String) ?? ""
        #expect(message.contains("disk.minFreeBytes=33554432") && message.contains("high-water"), "\(message)")
        #expect(retryAfter != nil)
        // Logs and diagnostic uploads are refused too; queries keep working.
        (s, b, _) = try await d.post("/v1/logs?app=com.contoso.disk", body: Array(#"{"level":"info","message":"x"}"#.utf8))
        #expect(s == 507)
        let (q, _) = try await d.get("/v1/events?app=com.contoso.disk")
        #expect(q == 200)
        #expect(try await d.allEvents(extra: "&app=com.contoso.disk").contains { $0["eventId"] as? String == "before" })
        let (h, _) = try await d.get("/healthz")
        #expect(h == 200)

        // Space returns: ingest resumes by itself within ~5 s.
        try FileManager.default.removeItem(at: ballast)
        let freed = ContinuousClock.now
        var resumed = false
        while ContinuousClock.now - freed < .seconds(6) {
            let (status, _, _) = try await d.post("/v1/telemetry", body: Self.event("after"))
            if status == 200 {
                resumed = true
                break
            }
            #expect(status == 507)
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(resumed, "ingest did not resume within 6 s of freeing space")
        #expect(ContinuousClock.now - freed < .seconds(5))
        #expect(try await d.allEvents(extra: "&app=com.contoso.disk").contains { $0["eventId"] as? String == "after" })
        d.stop()
    }
}
