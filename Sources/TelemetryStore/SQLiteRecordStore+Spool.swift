public import StoreCore
public import TelemetryModel

/// The embedded store as a ClickHouse collector's spool: each environment's
/// ``EnvironmentSpool`` answers for it.
extension SQLiteRecordStore: Spool {
    public func unshippedBatches(env: TelemetryEnvironment, after: Int64, limit: Int) async throws -> [SpoolBatch] {
        try await spools[env].unshippedBatches(after: after, limit: limit)
    }

    public func removeShipped(env: TelemetryEnvironment, batchIDs: [Int64]) async throws {
        try await spools[env].removeShipped(batchIDs: batchIDs)
    }

    public func unshippedIncidents(env: TelemetryEnvironment) async throws -> [Incident] {
        try await spools[env].unshippedIncidents()
    }

    public func markIncidentsShipped(env: TelemetryEnvironment, ids: [String]) async throws {
        try await spools[env].markIncidentsShipped(ids: ids)
    }

    public func depth(env: TelemetryEnvironment) async throws -> SpoolDepth {
        try await spools[env].depth()
    }

    public func maintain(env: TelemetryEnvironment, limits: RetentionPolicy.Limits, nowMs: Int64) async throws -> RetentionResult {
        try await spools[env].maintain(limits, nowMs: nowMs)
    }

    public func unshippedBatchIDs(env: TelemetryEnvironment) async throws -> ClosedRange<Int64>? {
        try await spools[env].unshippedBatchIDs()
    }
}
