import Foundation
import StoreCore
import Synchronization
import TelemetryStore
import Testing

@testable import TelemetryServer

/// Disk high-water through the router: past the mark ingest answers 507 naming it (logs
/// too), queries and health still answer, and ingest resumes at the first check that finds
/// space back. The filesystem is scripted, so no tmpfs, no root and no waiting for a timer:
/// the test runs the guard's check itself, as its timer and every commit do in the daemon.
/// With keep-free retention off, the space must come back from elsewhere (the operator,
/// here); deleting for space is `DiskReclaimTests` and `RetentionGrowthTests`.
@Suite struct DiskHighWaterRouteTests {
    /// A 64 MiB filesystem whose free bytes the test sets.
    final class ScriptedDisk: FilesystemSpace {
        let free = Mutex<Int64>(60 << 20)
        func usage(of directory: URL) -> FilesystemUsage? {
            FilesystemUsage(freeBytes: free.withLock { $0 }, totalBytes: 64 << 20)
        }
    }

    static func event(_ id: String) -> String {
        #"{"name":"AppLaunch","appId":"com.contoso.disk","deviceId":"d","eventId":"\#(id)","data":{"managementType":"MDM"}}"#
    }

    @Test func highWaterRefusesWith507AndRecoversWhenSpaceReturns() async throws {
        let disk = ScriptedDisk()
        // Keep-free retention off: this is the case where only the operator can free space.
        // The timer is far off so only the checks this test runs (and commits) move the guard.
        let limits = DiskGuard.Configuration(minFreeBytes: 33_554_432, minFreeRatio: 0, keepFreeBytes: 0, checkInterval: .seconds(3600))
        let adjust: @Sendable (inout ServerConfiguration) -> Void = { $0.disk = limits }
        try await IngestHarness.run(space: disk, adjust: adjust) { h in
            var answer = try await h.post("/v1/telemetry", Self.event("before"))
            #expect(answer.status == .ok, "\(answer.body)")

            // About 20 MiB free: below the 32 MiB mark.
            disk.free.withLock { $0 = 20 << 20 }
            #expect(h.components.disk.check(), "the check must see the crossing")
            answer = try await h.post("/v1/telemetry", Self.event("during"))
            #expect(answer.status.code == 507, "\(answer.body)")
            #expect(
                answer.errorMessage.contains("disk.minFreeBytes=33554432") && answer.errorMessage.contains("high-water"),
                "\(answer.errorMessage)")
            #expect(answer.headers[.retryAfter] != nil)
            // Logs and diagnostic uploads are refused too; queries and health keep working.
            answer = try await h.post("/v1/logs?app=com.contoso.disk", #"{"level":"info","message":"x"}"#)
            #expect(answer.status.code == 507, "\(answer.body)")
            #expect(try await h.records("events", "app=com.contoso.disk").compactMap { $0["eventId"] as? String } == ["before"])
            _ = try await h.get("/healthz")

            // Still below the mark: a check changes nothing and ingest stays refused.
            #expect(!h.components.disk.check())
            #expect(try await h.post("/v1/telemetry", Self.event("still")).status.code == 507)

            // Space returns: the next check lifts the refusal by itself.
            disk.free.withLock { $0 = 60 << 20 }
            #expect(h.components.disk.check())
            answer = try await h.post("/v1/telemetry", Self.event("after"))
            #expect(answer.status == .ok, "\(answer.body)")
            #expect(try await h.records("events", "app=com.contoso.disk").compactMap { $0["eventId"] as? String } == ["before", "after"])
        }
    }
}
