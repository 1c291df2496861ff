import StoreCore
import TelemetryModel

/// Event stats as ClickHouse aggregations, handed to the stats builders as the same rollup
/// rows the embedded store keeps per hour and minute, here per bucket of the asked interval (so the
/// builders' bucketing leaves them where they are). Aggregated at read time, nothing is
/// rolled up ahead: `rollupGrain` has no meaning on this backend and is ignored.
///
/// - Counts: `uniqExact(id)` per bucket, app, detail, status code and outcome, so a re-sent
///   row not yet merged away counts once (its copies fall into the same group).
/// - Durations: per bucket, app and detail, how many events share the top 19 bits of the
///   duration's IEEE 754 pattern (sign, exponent, 7 mantissa bits): exactly the key a
///   ``LatencySketch`` files a value under, so the sketch rebuilt from these counts, and its
///   percentiles, equal the embedded store's. (`reinterpretAsString` drops trailing zero
///   bytes; `reinterpretAsUInt64` pads them back, so the pattern round-trips, 0.0 included.)
struct ClickHouseEventStats: Sendable {
    let client: ClickHouseClient
    let database: String
    let scan: EventStatsScan

    func visit(_ visit: @Sendable (EventStatsInput) -> Void) async throws {
        let counts = try TabSeparatedRows(try await client.execute(countsStatement()), columns: 6).rows
        for row in counts {
            visit(
                .counts(
                    EventRollup(
                        start: try TabSeparatedRows.int(row[0]), name: scan.name, appId: TabSeparatedRows.string(row[1]),
                        detail: TabSeparatedRows.string(row[2]),
                        statusCode: try TabSeparatedRows.optionalInt(row[3]).map { Int(truncatingIfNeeded: $0) },
                        succeeded: try TabSeparatedRows.optionalInt(row[4]).map { $0 != 0 }, count: Int(try TabSeparatedRows.int(row[5])))))
        }
        struct Group: Hashable {
            var bucket: Int64
            var app: String
            var detail: String
        }
        var sketches: [Group: LatencySketch] = [:]
        let durations = try TabSeparatedRows(try await client.execute(durationsStatement()), columns: 5).rows
        for row in durations {
            let group = Group(
                bucket: try TabSeparatedRows.int(row[0]), app: TabSeparatedRows.string(row[1]), detail: TabSeparatedRows.string(row[2]))
            guard let top = UInt64(String(decoding: row[3], as: UTF8.self)) else {
                throw ClickHouseError.badResponse(endpoint: "-", detail: "duration key '\(String(decoding: row[3], as: UTF8.self))'")
            }
            sketches[group, default: LatencySketch()].add(Double(bitPattern: top << 45), count: Int(try TabSeparatedRows.int(row[4])))
        }
        for (group, sketch) in sketches where !sketch.isEmpty {
            visit(
                .durations(
                    EventLatencyRollup(start: group.bucket, name: scan.name, appId: group.app, detail: group.detail, durations: sketch)))
        }
    }

    /// Events of the scan's name in its window (inclusive), of its app when given.
    private var filter: ClickHouseSQL {
        var filters: [ClickHouseSQL] = ["kind = 'event'", "name = \(scan.name)", "time >= \(scan.since)", "time <= \(scan.until)"]
        if let app = scan.app { filters.append("app = \(app)") }
        return ClickHouseSQL.joined(filters, separator: " AND ")
    }

    /// The bucket start of `time`, floored also before 1970 (`%` keeps the dividend's sign),
    /// as the stats parameters align it.
    private var bucket: ClickHouseSQL {
        "time - (time % \(scan.bucketMs) + \(scan.bucketMs)) % \(scan.bucketMs)"
    }

    func countsStatement() -> ClickHouseSQL {
        """
        SELECT \(fragment: bucket) AS bucket, app, detail, statusCode, succeeded, uniqExact(id)
        FROM \(identifier: database).records
        WHERE \(fragment: filter)
        GROUP BY bucket, app, detail, statusCode, succeeded
        FORMAT TabSeparated
        """
    }

    func durationsStatement() -> ClickHouseSQL {
        """
        SELECT \(fragment: bucket) AS bucket, app, detail,
          bitShiftRight(reinterpretAsUInt64(reinterpretAsString(assumeNotNull(durationMs))), 45) AS top, uniqExact(id)
        FROM \(identifier: database).records
        WHERE \(fragment: filter) AND isNotNull(durationMs)
        GROUP BY bucket, app, detail, top
        FORMAT TabSeparated
        """
    }
}
