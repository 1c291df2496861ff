import StoreCore
import TelemetryModel

/// Reads pages of records from a ClickHouse `records` table with the embedded store's
/// semantics: the same filters (`RecordQuery`), the same cursor (`nextAfter` is the page's
/// last record when another match follows), records in the form the query's presenter shows
/// them and `contains` matched against that form, so every privacy rule runs through the
/// same code as on the embedded store.
///
/// Ids are ``RecordID``s. A row re-sent by the forwarder exists twice until
/// `ReplacingMergeTree` merges the parts; both copies carry the same id (ids are unique in
/// the cluster, the collector is inside them), so reading in id order and dropping a row
/// whose id equals the previous row's shows each record once. Rows are fetched in chunks;
/// when duplicates or the `contains` filter leave a chunk short, the next one starts after
/// the last id read. A pseudonym filter is matched here too, like `contains` (with the
/// user's devices, as `RecordQuery.matchesIdentity` says).
struct ClickHouseRecordReader: Sendable {
    let client: ClickHouseClient
    let database: @Sendable (TelemetryEnvironment) -> String

    static let columns = 15

    /// One page, presented, and where the next starts.
    func page(_ q: RecordQuery) async throws -> (records: [StoredRecord], next: Int64?) {
        let limit = max(q.limit, 0)
        // One more than the page, to learn whether another match follows, and some room for
        // duplicates; a `contains` filter rejects an unknown share, so it reads larger chunks.
        let filteredHere = q.contains != nil || q.identityPseudonym != nil
        let chunk = filteredHere ? 5_000 : min(limit + 16, 20_000)
        let needle = q.contains.map { Array($0.lowercased().utf8) }
        let presenter = q.presenter
        var accepted: [StoredRecord] = []
        var previousID: Int64?
        var after = q.after
        while true {
            let answer = try await client.execute(statement(q, after: after, chunk: chunk))
            let rows = try TabSeparatedRows(answer, columns: Self.columns)
            for r in 0..<rows.count {
                let id = try TabSeparatedRows.int(rows.field(r, 0))
                if id == previousID { continue }
                previousID = id
                var record = try Self.record(rows, r, id: id, env: q.env)
                // ClickHouse cannot compute the daemon's keyed pseudonyms: matched here.
                if q.identityPseudonym != nil, !q.matchesIdentity(record.keys) { continue }
                if let presenter { record = presenter.present(record) }
                if let needle, !record.json.withUnsafeBufferPointer({ $0.containsCaseInsensitive(needle) }) { continue }
                if accepted.count == limit { return (accepted, accepted.last?.id) }
                accepted.append(record)
            }
            guard rows.count == chunk, let last = previousID else { return (accepted, nil) }
            after = last
        }
    }

    /// The statement for one chunk: every filter of `RecordQuery.matches` as bound values.
    func statement(_ q: RecordQuery, after: Int64?, chunk: Int) -> ClickHouseSQL {
        let kind = q.kind == .event ? "event" : "log"
        var filters: [ClickHouseSQL] = ["kind = \(kind)"]
        if let v = q.app { filters.append("app = \(v)") }
        if let apps = q.apps {
            let any = apps.sorted().map { app -> ClickHouseSQL in "app = \(app)" }
            filters.append(any.isEmpty ? "0" : "(\(fragment: ClickHouseSQL.joined(any, separator: " OR ")))")
        }
        if let v = q.device { filters.append("device = \(v)") }
        if let v = q.session { filters.append("session = \(v)") }
        // Stored lower-cased, as `RecordQuery` lower-cases the filter.
        if let v = q.identity {
            if let devices = q.identityDevices {
                filters.append("(identity = \(v) OR (identity = '' AND has(\(devices.sorted()), device)))")
            } else {
                filters.append("identity = \(v)")
            }
        }
        if q.identityPseudonym != nil {
            // The pseudonym itself is matched while reading (`page`); here the rows it may match.
            if let devices = q.identityDevices {
                filters.append("(identity != '' OR has(\(devices.sorted()), device))")
            } else {
                filters.append("identity != ''")
            }
        }
        if let v = q.name { filters.append("name = \(v)") }
        if let v = q.statusCode { filters.append("statusCode = \(Int64(v))") }
        if let v = q.incident { filters.append("incident = \(v)") }
        // A record without a level counts as info, as on the embedded store.
        if let v = q.minLevel { filters.append("ifNull(CAST(level AS Nullable(Int8)), 1) >= \(Int64(v.rawValue))") }
        if let v = q.since { filters.append("time >= \(v)") }
        if let v = q.until { filters.append("time <= \(v)") }
        if let after { filters.append(q.order == .asc ? "id > \(after)" : "id < \(after)") }
        if let v = q.throughID { filters.append("id <= \(v)") }
        let direction: ClickHouseSQL = q.order == .asc ? "ASC" : "DESC"
        return """
            SELECT id, receivedAt, time, app, device, session, identity, name, detail, statusCode, durationMs, succeeded, level,
              incident, raw
            FROM \(identifier: database(q.env)).records
            WHERE \(fragment: ClickHouseSQL.joined(filters, separator: " AND "))
            ORDER BY id \(fragment: direction)
            LIMIT \(chunk)
            FORMAT TabSeparated
            """
    }

    /// A row as the embedded store would return it: its keys rebuilt from the columns.
    static func record(_ rows: TabSeparatedRows, _ r: Int, id: Int64, env: TelemetryEnvironment) throws -> StoredRecord {
        let row = { (column: Int) in rows.field(r, column) }
        var keys = RecordKeys(
            time: try TabSeparatedRows.int(row(2)), appId: TabSeparatedRows.string(row(3)), deviceId: TabSeparatedRows.string(row(4)),
            sessionId: TabSeparatedRows.string(row(5)), identity: TabSeparatedRows.string(row(6)), name: TabSeparatedRows.string(row(7)),
            detail: TabSeparatedRows.string(row(8)))
        keys.statusCode = try TabSeparatedRows.optionalInt(row(9)).map { Int(truncatingIfNeeded: $0) }
        keys.durationMs = try TabSeparatedRows.optionalDouble(row(10))
        keys.succeeded = try TabSeparatedRows.optionalInt(row(11)).map { $0 != 0 }
        keys.level = TabSeparatedRows.optionalString(row(12)).flatMap { name in LogLevel.allCases.first { $0.name == name } }
        keys.incident = TabSeparatedRows.string(row(13))
        // A record an older version stored is read in the form every reader can parse.
        let raw = TabSeparatedRows.bytes(row(14))
        let json = raw.withUnsafeBufferPointer { CanonicalJSON.repairing(stored: $0) } ?? raw
        return StoredRecord(id: id, receivedAt: try TabSeparatedRows.int(row(1)), env: env, keys: keys, json: json)
    }
}
