import Foundation
import Logging
import StoreCore
import TestSupport
import Testing

@testable import TelemetryServer

/// What a reload does beyond swapping the settings (`DaemonComponents.actOnReloadedSettings`,
/// the step `systemctl reload` runs after a configuration is taken): here, that the WAL's
/// checkpoint size follows a keep-free floor lowered while the daemon runs. The store-level
/// half (the bound moves on a running writer) is `RetentionSpaceTests`; this is the daemon's
/// half, from the reloaded disk settings to the WAL records go through.
@Suite struct ReloadedDiskSettingsTests {
    /// A filesystem far larger than any floor here, so ingest is never refused for space.
    struct RoomyDisk: FilesystemSpace {
        func usage(of directory: URL) -> FilesystemUsage? { FilesystemUsage(freeBytes: 800 << 30, totalBytes: 1 << 40) }
    }

    /// One event of about 60 KB that zlib cannot shrink much (base64 of random bytes).
    static func paddedEvent(_ id: String) -> String {
        func noise() -> String {
            var generator = SystemRandomNumberGenerator()
            let words = (0..<2_813).map { _ in generator.next() }
            return words.withUnsafeBytes { Data($0) }.base64EncodedString()
        }
        return
            #"{"name":"AppLaunch","appId":"com.contoso.wal","deviceId":"d","eventId":"\#(id)","data":{"a":"\#(noise())","b":"\#(noise())"}}"#
    }

    @Test func aLoweredFloorBoundsTheWALOfTheRunningDaemon() async throws {
        // Started with a 256 MiB floor: the WAL may reach the store's 64 MiB default.
        let started = DiskGuard.Configuration(minFreeBytes: 256 << 20, minFreeRatio: 0, keepFreeBytes: 0, checkInterval: .seconds(3600))
        // Compaction is held off: a merge rewrites several of these commits in one transaction,
        // which the WAL takes whole before the next checkpoint; the bound is what is tested.
        let adjust: @Sendable (inout ServerConfiguration) -> Void = {
            $0.disk = started
            $0.store.compaction.interval = .seconds(3600)
        }
        try await IngestHarness.run(space: RoomyDisk(), adjust: adjust) { h in
            #expect(h.components.configuration.store.walCheckpointBytes == 64 << 20)
            // The reload lowers the floor to 16 MiB: a quarter of it, 4 MiB, bounds the WAL.
            var reloaded = h.components.configuration
            reloaded.disk.minFreeBytes = 16 << 20
            h.components.settings.apply(reloaded)
            await h.components.actOnReloadedSettings(logger: Logger(label: "reload-test"))

            let wal = h.components.configuration.dataDirectory.appendingPathComponent("prod/records.sqlite-wal").path
            // About 40 MiB in commits of about 1 MiB (16 events of 60 KB, one request each).
            let largest = try await FileSizeWatcher.largestSize(of: wal) {
                for round in 0..<40 {
                    let body = (0..<16).map { Self.paddedEvent("w\(round)-\($0)") }.joined(separator: "\n")
                    let answer = try await h.post("/v1/telemetry", body)
                    #expect(answer.accepted == 16, "\(answer.status) \(answer.body.prefix(300))")
                }
            }
            let bound: Int64 = 4 << 20
            #expect(largest < bound + (3 << 20), "the WAL reached \(largest) bytes; the reloaded floor bounds it at \(bound)")
            #expect(largest > bound * 3 / 4, "the WAL was checkpointed at \(largest) bytes, before the bound of \(bound)")
        }
    }
}
