import Foundation
public import Logging
public import StoreCore
public import TelemetryModel

/// Retention on the ClickHouse backend, as a ``RetentionStore`` the daemon's
/// ``RetentionService`` drives with the same policy and schedule as the embedded store.
///
/// - ClickHouse: records are partitioned by (retention class, day of receipt) and 18.16 has
///   no `TTL` clause, so age limits drop whole partitions, the cheapest delete ClickHouse has.
///   A partition goes once its whole day is older than its class's limit: the cut-off is the
///   day (in the server's time zone, as the partition key computes it) holding
///   `now - limit`, and only days before it are dropped, so a record outlives its limit by
///   less than one day. Verbose log records expire at the shorter of the verbose and logs
///   ages. Incidents are partitioned by month of creation and go, month by month, after the
///   logs age (an incident outlives it by less than one month). Every endpoint of this
///   collector is swept, because with a cluster each holds its own shard's local tables.
/// - The spool: never aged out. Acknowledged records leave it only by shipping (an outage
///   longer than the retention period must not delete what ClickHouse never got); its size
///   is bounded by `clickhouse.spoolMaxBytes`, past which ingest answers 503. Retention only
///   keeps its bookkeeping bounded (``Spool/maintain(env:limits:nowMs:)``).
/// - Space: the disk guard's keep-free floor protects this host's disk, where only the spool
///   lives; it may give free pages back but never deletes spooled data (no oldest data is
///   offered), and the size cap `maxBytes` does not apply to ClickHouse (size its disks).
public struct ClickHouseRetention: RetentionStore {
    let client: ClickHouseClient
    let spool: any Spool
    let logger: Logger

    public init(client: ClickHouseClient, spool: any Spool, logger: Logger) {
        self.client = client
        self.spool = spool
        self.logger = logger
    }

    public func applyRetention(_ limits: RetentionPolicy.Limits, env: TelemetryEnvironment, nowMs: Int64, returnFreeSpace: Bool)
        async throws -> RetentionResult
    {
        // The spool first: its upkeep must not wait for ClickHouse to be reachable.
        var result = try await spool.maintain(env: env, limits: limits, nowMs: nowMs)
        let configuration = client.configuration
        let schema = ClickHouseSchema(
            database: ClickHouseMigrator.database(configuration.database, env: env), cluster: configuration.cluster)
        var firstError: (any Error)?
        for endpoint in configuration.endpoints {
            do {
                result += try await dropExpired(schema, limits: limits, nowMs: nowMs, on: endpoint)
            } catch {
                // The other shards are still swept; the pass reports the failure at its end.
                logger.warning(
                    "ClickHouse retention failed on one endpoint", metadata: ["endpoint": "\(endpoint)", "error": "\(error)"])
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
        return result
    }

    public func returnFreeSpace(env: TelemetryEnvironment) async throws -> Int64 {
        try await spool.returnFreeSpace(env: env)
    }

    /// The size cap does not apply to ClickHouse: passes run on the timer only.
    public func usedBytes(env: TelemetryEnvironment) async throws -> Int64? { nil }

    /// Nothing local is ever offered for deletion: the spool holds only unshipped records.
    public func oldestReceivedAt(_ retentionClass: RetentionClass, env: TelemetryEnvironment) async throws -> Int64? { nil }

    public func deleteOldest(_ retentionClass: RetentionClass, env: TelemetryEnvironment, atLeast bytes: Int64) async throws
        -> RetentionResult
    {
        RetentionResult()
    }

    /// One database on one endpoint: reads the partitions from `system.parts`, then drops
    /// those wholly past their limit. A dropped partition counts as one "batch" of the
    /// result, its rows as records (rows of a re-sent block not yet folded count twice).
    func dropExpired(_ schema: ClickHouseSchema, limits: RetentionPolicy.Limits, nowMs: Int64, on endpoint: URL) async throws
        -> RetentionResult
    {
        let cutoffs = try await cutoffDays(limits, nowMs: nowMs, on: endpoint)
        let listing = try await client.execute(
            """
            SELECT table, partition_id, sum(rows) FROM system.parts
            WHERE active AND database = \(schema.database)
              AND table IN (\(schema.recordsStorage), \(schema.incidentsStorage), \(schema.eventIDsStorage))
            GROUP BY table, partition_id FORMAT TSV
            """, on: endpoint)
        var result = RetentionResult()
        for line in String(decoding: listing, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 3, let rows = Int(fields[2]) else { continue }
            let drop: ClickHouseSQL
            if fields[0] == schema.recordsStorage {
                guard let partition = RecordsPartition(id: fields[1]), let cutoff = cutoffs.records[partition.retentionClass],
                    partition.day < cutoff
                else { continue }
                drop = """
                    ALTER TABLE \(identifier: schema.database).\(identifier: schema.recordsStorage)
                    DROP PARTITION (\(fragment: partition.retentionClass.clickHouseName), \(literal: partition.day))
                    """
            } else if fields[0] == schema.eventIDsStorage {
                // Retry-recognition ids, not records: not counted in the result.
                guard let day = Int64(fields[1]), day < cutoffs.eventIDs else { continue }
                _ = try await client.execute(
                    "ALTER TABLE \(identifier: schema.database).\(identifier: schema.eventIDsStorage) DROP PARTITION \(literal: day)",
                    on: endpoint)
                continue
            } else {
                guard let month = Int64(fields[1]), let cutoff = cutoffs.incidentsMonth, month < cutoff else { continue }
                drop = "ALTER TABLE \(identifier: schema.database).\(identifier: schema.incidentsStorage) DROP PARTITION \(literal: month)"
            }
            _ = try await client.execute(drop, on: endpoint)
            result.batches += 1
            result.records += rows
        }
        return result
    }

    /// The first day (`YYYYMMDD`) each class keeps, the first month (`YYYYMM`) of incidents
    /// and the first day of retry-recognition ids (``SpoolRetryWindow``), computed by the
    /// server so they use the time zone its partition keys use.
    func cutoffDays(_ limits: RetentionPolicy.Limits, nowMs: Int64, on endpoint: URL) async throws
        -> (records: [RetentionClass: Int64], incidentsMonth: Int64?, eventIDs: Int64)
    {
        let verbose = [limits.verboseLogsMaxAge, limits.logsMaxAge].compactMap { $0 }.min()
        let ages: [(RetentionClass?, Int64?)] = [
            (.verboseLogs, verbose), (.logs, limits.logsMaxAge), (.events, limits.eventsMaxAge), (nil, limits.logsMaxAge),
        ]
        // An absent limit is asked as second 0 and then ignored, to keep one fixed statement.
        let seconds = ages.map { $0.1.map { max(0, nowMs / 1000 - $0) } ?? 0 }
        let answer = try await client.execute(
            """
            SELECT toYYYYMMDD(toDateTime(\(seconds[0]))), toYYYYMMDD(toDateTime(\(seconds[1]))),
                   toYYYYMMDD(toDateTime(\(seconds[2]))), toYYYYMM(toDateTime(\(seconds[3]))),
                   toYYYYMMDD(toDateTime(\(max(0, nowMs / 1000 - SpoolRetryWindow.seconds)))) FORMAT TSV
            """, on: endpoint)
        let values = String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            .split(separator: "\t").compactMap { Int64($0) }
        guard values.count == 5 else {
            throw ClickHouseError.badResponse(endpoint: endpoint.absoluteString, detail: "retention cut-offs: \(values)")
        }
        var records: [RetentionClass: Int64] = [:]
        for (index, (retentionClass, age)) in ages.enumerated() {
            if let retentionClass, age != nil { records[retentionClass] = values[index] }
        }
        return (records, ages[3].1 == nil ? nil : values[3], values[4])
    }
}

/// A partition of the records table, read from its id in `system.parts`: ClickHouse names a
/// partition whose key is all integers (the class's `Enum8` value and `toYYYYMMDD`) by the
/// values joined with `-`, e.g. `2-20240131` for the events of 31 January 2024.
struct RecordsPartition: Hashable {
    var retentionClass: RetentionClass
    var day: Int64

    init?(id: String) {
        let parts = id.split(separator: "-")
        guard parts.count == 2, let code = Int(parts[0]), let day = Int64(parts[1]), let retentionClass = RetentionClass(enumValue: code)
        else { return nil }
        self.retentionClass = retentionClass
        self.day = day
    }
}

extension RetentionClass {
    /// The class's value in the records table's `retentionClass Enum8` column.
    init?(enumValue: Int) {
        switch enumValue {
        case 0: self = .verboseLogs
        case 1: self = .logs
        case 2: self = .events
        default: return nil
        }
    }

    /// The class as the partition expression names it (an `Enum8` literal, text of our own).
    var clickHouseName: ClickHouseSQL {
        switch self {
        case .verboseLogs: "'verboseLogs'"
        case .logs: "'logs'"
        case .events: "'events'"
        }
    }
}
