import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// Watches the free space of the data directory's filesystem and raises the high-water
/// flag when it falls below the configured floor, so ingest is refused with 507 before the
/// disk fills (SPEC §4). Queries keep working. The flag clears by itself once space returns
/// (retention, or the operator freeing space); a retention pass is triggered on the way up.
public final class DiskGuard: Service, Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Refuse ingest when fewer bytes than this are free ...
        public var minFreeBytes: Int64
        /// ... or when less than this share of the filesystem is free (0...1).
        public var minFreeRatio: Double
        public var checkInterval: Duration

        public init(minFreeBytes: Int64 = 512 << 20, minFreeRatio: Double = 0.05, checkInterval: Duration = .seconds(2)) {
            self.minFreeBytes = minFreeBytes
            self.minFreeRatio = minFreeRatio
            self.checkInterval = checkInterval
        }
    }

    public struct Status: Sendable, Hashable {
        public var freeBytes: Int64
        public var totalBytes: Int64
        public var refusing: Bool
    }

    private let directory: URL
    private let configuration: Configuration
    private let logger: Logger
    private let state = Mutex(Status(freeBytes: .max, totalBytes: .max, refusing: false))
    private let onHighWater: @Sendable () async -> Void

    public init(directory: URL, configuration: Configuration, logger: Logger, onHighWater: @escaping @Sendable () async -> Void = {}) {
        self.directory = directory
        self.configuration = configuration
        self.logger = logger
        self.onHighWater = onHighWater
        _ = check()
    }

    public var status: Status { state.withLock { $0 } }

    /// The refusal message, or nil when ingest may proceed. Cheap: reads the cached flag.
    public func refusal() -> String? {
        let s = status
        guard s.refusing else { return nil }
        return "the data directory has \(s.freeBytes) bytes free, below the high-water mark "
            + "(diskMinFreeBytes=\(configuration.minFreeBytes), diskMinFreeRatio=\(configuration.minFreeRatio)); "
            + "ingest resumes by itself when space returns"
    }

    /// Reads statvfs now and updates the flag; returns whether it changed.
    @discardableResult
    public func check() -> Bool {
        var fs = statvfs()
        guard statvfs(directory.path, &fs) == 0 else { return false }
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        let total = Int64(fs.f_blocks) * Int64(fs.f_frsize)
        let refusing = free < configuration.minFreeBytes || (total > 0 && Double(free) / Double(total) < configuration.minFreeRatio)
        let changed = state.withLock { s -> Bool in
            defer { s = Status(freeBytes: free, totalBytes: total, refusing: refusing) }
            return s.refusing != refusing
        }
        Gauge(label: "mamtelemetry_disk_free_bytes").record(free)
        Gauge(label: "mamtelemetry_disk_high_water").record(refusing ? 1 : 0)
        if changed {
            if refusing {
                logger.error(
                    "storage high-water: refusing ingest until space returns",
                    metadata: ["MESSAGE_ID": "\(DiskGuard.highWaterMessageID)", "freeBytes": "\(free)", "dataDir": "\(directory.path)"])
            } else {
                logger.notice("storage below high-water again: ingest resumed", metadata: ["freeBytes": "\(free)"])
            }
        }
        return changed
    }

    /// The journald MESSAGE_ID of "storage high-water" (see systemd/mamtelemetryd.catalog).
    public static let highWaterMessageID = "6b8f2c1e4d3a4f0e9b7c5a2d1e0f3c4b"

    public func run() async throws {
        while !Task.isShuttingDownGracefully {
            if check(), status.refusing { await onHighWater() }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.configuration.checkInterval) }
        }
    }
}
