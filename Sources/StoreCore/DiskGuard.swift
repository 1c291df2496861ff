public import Foundation
public import Logging
public import Metrics
public import ServiceLifecycle
import Synchronization
import TelemetryModel

/// Watches the free space of the data directory's filesystem. Below the high-water mark
/// ingest is refused with 507 before the disk fills (queries keep working); below the
/// keep-free floor retention deletes the oldest data and gives the space back, like
/// journald's `SystemKeepFree=`. The refusal clears by itself at the first check that finds
/// space back above the mark — freed by retention or by anyone else. It checks every
/// `checkInterval` and after every commit of the store, so what the daemon itself writes never
/// takes the disk far below the floor between two checks.
public final class DiskGuard: Service, Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Refuse ingest when fewer bytes than this are free ...
        public var minFreeBytes: Int64
        /// ... or when less than this share of the filesystem is free (0...1).
        public var minFreeRatio: Double
        /// Retention deletes the oldest data while fewer bytes than this (and never less
        /// than the high-water mark) are free; 0 turns deleting for free space off.
        public var keepFreeBytes: Int64
        public var checkInterval: Duration

        public init(
            minFreeBytes: Int64 = 512 << 20, minFreeRatio: Double = 0.05, keepFreeBytes: Int64 = 1 << 30,
            checkInterval: Duration = .seconds(2)
        ) {
            self.minFreeBytes = minFreeBytes
            self.minFreeRatio = minFreeRatio
            self.keepFreeBytes = keepFreeBytes
            self.checkInterval = checkInterval
        }

        /// Free bytes below which ingest is refused, on a filesystem of `totalBytes`.
        public func highWaterBytes(totalBytes: Int64) -> Int64 {
            max(minFreeBytes, Int64((Double(totalBytes) * minFreeRatio).rounded(.up)))
        }

        /// Free bytes below which retention deletes for space, nil when that is off. Never
        /// below the high-water mark, so retention always acts before ingest is refused for
        /// long; it then frees a tenth more than the floor so it does not run again for
        /// every few writes.
        public func keepFreeFloor(totalBytes: Int64) -> Int64? {
            guard keepFreeBytes > 0 else { return nil }
            return max(keepFreeBytes, highWaterBytes(totalBytes: totalBytes))
        }
    }

    public struct Status: Sendable, Hashable {
        public var freeBytes: Int64
        public var totalBytes: Int64
        public var refusing: Bool
    }

    /// A change of the refusal state, for the daemon's log.
    public enum Transition: Sendable, Hashable {
        /// Free space fell below the high-water mark (`highWaterBytes`): ingest is refused.
        case refusing(Status, highWaterBytes: Int64)
        /// Free space is back above the mark: ingest is accepted again.
        case resumed(Status)
    }

    private let directory: URL
    private let configuration: @Sendable () -> Configuration
    private let space: any FilesystemSpace
    private let retention: RetentionService?
    private let logger: Logger
    private let freeBytesGauge: Gauge
    private let highWaterGauge: Gauge
    private let onTransition: @Sendable (Transition) -> Void
    private let commits: (@Sendable () -> AsyncStream<CommitNotice>)?
    private let state = Mutex(Status(freeBytes: .max, totalBytes: .max, refusing: false))

    /// - Parameters:
    ///   - configuration: read at every check, so reloaded thresholds apply at the next one.
    ///   - space: where free space is read (`StatvfsFilesystemSpace` in the daemon).
    ///   - retention: deletes for space below the keep-free floor; nil to only refuse.
    ///   - onTransition: told when the refusal starts and ends (the daemon logs it).
    ///   - commits: the store's commit notices, each one a reason to check (nil: the timer only).
    public init(
        directory: URL, configuration: @escaping @Sendable () -> Configuration, space: any FilesystemSpace,
        retention: RetentionService? = nil, metrics: any MetricsFactory, logger: Logger,
        onTransition: @escaping @Sendable (Transition) -> Void = { _ in }, commits: (@Sendable () -> AsyncStream<CommitNotice>)? = nil
    ) {
        freeBytesGauge = Gauge(label: MetricName.diskFreeBytes.rawValue, factory: metrics)
        highWaterGauge = Gauge(label: MetricName.diskHighWater.rawValue, factory: metrics)
        self.directory = directory
        self.configuration = configuration
        self.space = space
        self.retention = retention
        self.logger = logger
        self.onTransition = onTransition
        self.commits = commits
        check()
    }

    public var status: Status { state.withLock { $0 } }

    /// The refusal message, or nil when ingest may proceed. Cheap: reads the cached flag.
    public func refusal() -> String? {
        let s = status
        guard s.refusing else { return nil }
        let c = configuration()
        var message =
            "the data directory has \(s.freeBytes) bytes free, below the high-water mark "
            + "(disk.minFreeBytes=\(c.minFreeBytes), disk.minFreeRatio=\(c.minFreeRatio)); "
        if c.keepFreeBytes > 0 {
            message += "retention is deleting the oldest data to free space (disk.keepFreeBytes=\(c.keepFreeBytes)) and "
        }
        return message + "ingest resumes by itself when space returns"
    }

    /// Reads the filesystem now and updates the flag; returns whether it changed.
    @discardableResult
    public func check() -> Bool {
        guard let usage = space.usage(of: directory) else { return false }
        let highWater = configuration().highWaterBytes(totalBytes: usage.totalBytes)
        let now = Status(freeBytes: usage.freeBytes, totalBytes: usage.totalBytes, refusing: usage.freeBytes < highWater)
        let changed = state.withLock { s -> Bool in
            defer { s = now }
            return s.refusing != now.refusing
        }
        freeBytesGauge.record(now.freeBytes)
        highWaterGauge.record(now.refusing ? 1 : 0)
        if changed {
            onTransition(now.refusing ? .refusing(now, highWaterBytes: highWater) : .resumed(now))
        }
        return changed
    }

    /// Below the keep-free floor, has retention delete the oldest data until a tenth more
    /// than the floor is free (or nothing deletable is left).
    public func keepFloor() async {
        guard let retention, let usage = space.usage(of: directory),
            let floor = configuration().keepFreeFloor(totalBytes: usage.totalBytes), usage.freeBytes < floor
        else { return }
        // Saturating: a floor configured near Int64.max (an operator's "always refuse") must
        // not trap the guard.
        let (sum, overflow) = floor.addingReportingOverflow(floor / 10)
        let target = overflow ? Int64.max : sum
        let (space, directory) = (self.space, self.directory)
        do {
            try await retention.makeRoom {
                space.usage(of: directory).map { RetentionService.SpaceNeed(missingBytes: target - $0.freeBytes, freeBytes: $0.freeBytes) }
            }
        } catch {
            logger.error("retention could not free space", metadata: ["error": "\(error)"])
        }
    }

    /// Checks, then keeps the floor, every `checkInterval` and after every commit. A refusal
    /// is re-evaluated at the next check after retention's pass: it clears as soon as space
    /// is back, which is the next timer tick at the latest (refused posts commit nothing) and
    /// at once when a tick rang during the pass. It never flickers around the mark within
    /// one pass: clients get one clear answer (507 with Retry-After) until then.
    public func run() async throws {
        let wakeups = Wakeups()
        let commits = self.commits?()
        wakeups.ring(.timer)
        await cancelWhenGracefulShutdown {
            await wakeups.run(interval: { self.configuration().checkInterval }, commits: commits) { _ in
                self.check()
                await self.keepFloor()
            }
        }
    }
}
