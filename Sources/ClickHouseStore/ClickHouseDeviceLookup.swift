import StoreCore
import TelemetryModel

/// Device lookups and a user's devices, answered from the `records` table (with a cluster,
/// the `Distributed` one, so every shard's devices are found): ClickHouse reads the `device`
/// column alone, so there is no index to keep beside it. The rules are the embedded store's
/// (`DeviceLookupResult`): exact, case-insensitive or prefix (from three characters), else the
/// nearest ids in sorted order.
struct ClickHouseDeviceLookup: Sendable {
    let client: ClickHouseClient
    let database: String

    typealias Row4 = (device: String, app: String, first: Int64, last: Int64)

    func find(_ l: DeviceLookup) async throws -> DeviceLookupResult {
        let lower = l.text.lowercased()
        let limit = max(l.limit, 1)
        var appFilter: ClickHouseSQL = l.app.map { "AND app = \($0)" } ?? ""
        if let apps = l.apps { appFilter = "\(fragment: appFilter) AND has(\(apps.sorted()), app)" }
        let exact = DeviceLookupResult.fold(
            try await rows("WHERE device = \(l.text) \(fragment: appFilter)", order: "device, app", limit: 1000)
        ).first
        let matching: ClickHouseSQL =
            lower.count >= DeviceLookupResult.minimumPrefix
            ? "WHERE substring(lowerUTF8(device), 1, \(lower.utf8.count)) = \(lower) \(fragment: appFilter)"
            : "WHERE lowerUTF8(device) = \(lower) \(fragment: appFilter)"
        let matches = DeviceLookupResult.fold(try await rows(matching, order: "device, app", limit: (limit + 1) * 16))
        var result = DeviceLookupResult(exact: exact, matches: Array(matches.prefix(limit + 1)))
        guard exact == nil, matches.isEmpty else { return result }
        let before = try await rows(
            "WHERE lowerUTF8(device) < \(lower) \(fragment: appFilter)", order: "lowerUTF8(device) DESC, device DESC, app DESC",
            limit: 4 * limit)
        let after = try await rows(
            "WHERE lowerUTF8(device) > \(lower) \(fragment: appFilter)", order: "lowerUTF8(device), device, app", limit: 4 * limit)
        let candidates = DeviceLookupResult.fold(before.reversed()) + DeviceLookupResult.fold(after)
        result.near = DeviceLookupResult.rankNear(candidates, to: l.text, limit: min(limit, 5))
        return result
    }

    /// The devices `user` used in the window, most recent first. ClickHouse cannot compute the
    /// daemon's keyed pseudonyms, so a pseudonym is first resolved here to the window's
    /// identities that have it (read, never returned), then asked for like an identity.
    func devices(usedBy user: IdentitySelector, apps: Set<String>?, since: Int64?, until: Int64?, limit: Int) async throws -> [String] {
        var filters: [ClickHouseSQL] = ["device != ''"]
        if let apps { filters.append("has(\(apps.sorted()), app)") }
        if let since { filters.append("time >= \(since)") }
        if let until { filters.append("time <= \(until)") }
        switch user {
        case .identity(let identity):
            filters.append("identity = \(identity)")
        case .pseudonym(let filter):
            let identities = try await identities(where: filters).filter(filter.matches)
            guard !identities.isEmpty else { return [] }
            filters.append("has(\(identities), identity)")
        }
        let answer = try await client.execute(
            """
            SELECT device, max(time) AS latest FROM \(identifier: database).records
            WHERE \(fragment: ClickHouseSQL.joined(filters, separator: " AND "))
            GROUP BY device ORDER BY latest DESC, device LIMIT \(limit) FORMAT TabSeparated
            """)
        return try TabSeparatedRows(answer, columns: 2).rows.map { TabSeparatedRows.string($0[0]) }
    }

    /// The distinct identities of the records matching `filters`.
    private func identities(where filters: [ClickHouseSQL]) async throws -> [String] {
        let answer = try await client.execute(
            """
            SELECT DISTINCT identity FROM \(identifier: database).records
            WHERE identity != '' AND \(fragment: ClickHouseSQL.joined(filters, separator: " AND "))
            FORMAT TabSeparated
            """)
        return try TabSeparatedRows(answer, columns: 1).rows.map { TabSeparatedRows.string($0[0]) }
    }

    private func rows(_ filter: ClickHouseSQL, order: ClickHouseSQL, limit: Int) async throws -> [Row4] {
        let answer = try await client.execute(
            """
            SELECT device, app, min(receivedAt), max(receivedAt) FROM \(identifier: database).records
            \(fragment: filter) AND device != ''
            GROUP BY device, app ORDER BY \(fragment: order) LIMIT \(limit) FORMAT TabSeparated
            """)
        return try TabSeparatedRows(answer, columns: 4).rows.map { row in
            (
                TabSeparatedRows.string(row[0]), TabSeparatedRows.string(row[1]), try TabSeparatedRows.int(row[2]),
                try TabSeparatedRows.int(row[3])
            )
        }
    }
}
