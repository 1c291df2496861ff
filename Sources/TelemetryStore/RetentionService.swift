import Foundation
import Logging
import Metrics
import ServiceLifecycle
import TelemetryModel

/// Applies the retention policy every `interval`, and on demand (e.g. when the disk
/// guard sees the data directory past its high-water mark).
public final class RetentionService: Service, Sendable {
    private let store: SQLiteRecordStore
    private let policy: RetentionPolicy
    private let interval: Duration
    private let logger: Logger
    private let now: @Sendable () -> Int64

    public init(
        store: SQLiteRecordStore, policy: RetentionPolicy, interval: Duration = .seconds(300), logger: Logger,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.store = store
        self.policy = policy
        self.interval = interval
        self.logger = logger
        self.now = now
    }

    /// One pass over both environments.
    @discardableResult
    public func sweep() async throws -> [TelemetryEnvironment: RetentionResult] {
        var out: [TelemetryEnvironment: RetentionResult] = [:]
        for env in TelemetryEnvironment.allCases {
            let r = try await store.databases[env]!.applyRetention(policy.limits(for: env), nowMs: now())
            out[env] = r
            if r.batches > 0 {
                Counter(label: "mamtelemetry_retention_deleted_records_total", dimensions: [("env", env.rawValue)]).increment(by: r.records)
                logger.info("retention removed old data", metadata: ["env": "\(env)", "batches": "\(r.batches)", "records": "\(r.records)"])
            }
        }
        return out
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully {
            do {
                try await sweep()
            } catch {
                logger.error("retention pass failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
    }
}
