import Foundation
public import TelemetryModel

/// Brings every database this collector writes (production's and PPE's) on every one of its
/// endpoints up to ``ClickHouseSchema/knownVersion``, and refuses a database a newer daemon
/// has already migrated further. Run at start and again by the forwarder before its first
/// insert after ClickHouse was unreachable at start.
public struct ClickHouseMigrator: Sendable {
    public let client: ClickHouseClient

    public init(client: ClickHouseClient) { self.client = client }

    /// The database of `env`: `<database>` for production, `<database>_ppe` for PPE.
    public static func database(_ base: String, env: TelemetryEnvironment) -> String {
        env == .prod ? base : base + "_ppe"
    }

    /// Migrates each database on each endpoint; returns the version now in force.
    @discardableResult
    public func migrate() async throws -> Int {
        for endpoint in client.configuration.endpoints {
            for env in TelemetryEnvironment.allCases {
                let schema = ClickHouseSchema(
                    database: Self.database(client.configuration.database, env: env), cluster: client.configuration.cluster)
                try await migrate(schema, on: endpoint)
            }
        }
        return ClickHouseSchema.knownVersion
    }

    func migrate(_ schema: ClickHouseSchema, on endpoint: URL) async throws {
        _ = try await client.execute("CREATE DATABASE IF NOT EXISTS \(identifier: schema.database)", on: endpoint)
        _ = try await client.execute(schema.migrationsTable, on: endpoint)
        let current = try await version(of: schema, on: endpoint)
        guard current <= ClickHouseSchema.knownVersion else {
            throw ClickHouseSchemaError.newerSchema(
                database: schema.database, endpoint: endpoint.absoluteString, found: current, known: ClickHouseSchema.knownVersion)
        }
        for migration in ClickHouseSchema.migrations where migration.version > current {
            for statement in migration.statements(schema) {
                _ = try await client.execute(statement, on: endpoint)
            }
            let record: ClickHouseSQL = """
                INSERT INTO \(identifier: schema.database).schema_migrations (version, summary)
                VALUES (\(Int64(migration.version)), \(migration.summary.description))
                """
            _ = try await client.execute(record, on: endpoint)
        }
    }

    /// The highest version recorded in `schema_migrations` (0 for a new database).
    func version(of schema: ClickHouseSchema, on endpoint: URL) async throws -> Int {
        let answer = try await client.execute(
            "SELECT max(version) FROM \(identifier: schema.database).schema_migrations FORMAT TSV", on: endpoint)
        let text = String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let version = Int(text) else {
            throw ClickHouseError.badResponse(endpoint: endpoint.absoluteString, detail: "schema version '\(text)' is not a number")
        }
        return version
    }
}
