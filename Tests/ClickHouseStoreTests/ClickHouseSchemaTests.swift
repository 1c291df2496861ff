import Foundation
import TestSupport
import Testing

@testable import ClickHouseStore

@Suite(.enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseSchemaTests {
    @Test func migrationCreatesBothDatabasesIdempotentlyAndRefusesANewerSchema() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let client = ClickHouseClient(configuration: .init(endpoints: server.urls, database: "mamt"))
        defer { Task { try? await client.shutdown() } }
        let migrator = ClickHouseMigrator(client: client)
        #expect(try await migrator.migrate() == ClickHouseSchema.knownVersion)
        // A second collector (or a restart) runs the same steps: nothing fails, nothing doubles.
        try await migrator.migrate()
        let tables = try await server.query(
            "SELECT database, name FROM system.tables WHERE database LIKE 'mamt%' ORDER BY database, name FORMAT TSV")
        #expect(
            tables == """
                mamt\tevent_ids
                mamt\tincidents
                mamt\trecords
                mamt\tschema_migrations
                mamt_ppe\tevent_ids
                mamt_ppe\tincidents
                mamt_ppe\trecords
                mamt_ppe\tschema_migrations

                """)
        _ = try await server.query("INSERT INTO mamt_ppe.schema_migrations (version, summary) VALUES (99, 'from the future')")
        await #expect(throws: ClickHouseSchemaError.self) { try await migrator.migrate() }
    }

    /// A database a version-1 daemon made (records and incidents, already holding rows) is
    /// brought to the current version in place: the new table appears, the rows stay.
    @Test func aVersionOneDatabaseIsMigratedInPlace() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        let client = ClickHouseClient(configuration: .init(endpoints: server.urls, database: "mamu"))
        defer { Task { try? await client.shutdown() } }
        let migrator = ClickHouseMigrator(client: client)
        for env in ["mamu", "mamu_ppe"] {
            let schema = ClickHouseSchema(database: env, cluster: nil)
            _ = try await server.query("CREATE DATABASE \(env)")
            _ = try await client.execute(schema.migrationsTable)
            for statement in ClickHouseSchema.migrations[0].statements(schema) { _ = try await client.execute(statement) }
            _ = try await server.query("INSERT INTO \(env).schema_migrations (version, summary) VALUES (1, 'records and incidents')")
        }
        _ = try await server.query(
            "INSERT INTO mamu.records (id, collector, kind, receivedAt, time, app, retentionClass, raw) VALUES (1, 1, 'event', 0, 0, 'a', 'events', '{}')"
        )
        #expect(try await migrator.migrate() == 2)
        let tables = try await server.query("SELECT name FROM system.tables WHERE database = 'mamu' ORDER BY name FORMAT TSV")
        #expect(tables == "event_ids\nincidents\nrecords\nschema_migrations\n")
        #expect(try await server.query("SELECT max(version) FROM mamu_ppe.schema_migrations") == "2\n")
        #expect(try await server.query("SELECT count() FROM mamu.records") == "1\n")
    }

    @Test func clusterModeCreatesLocalAndDistributedTablesOnEachShard() async throws {
        let server = try PrivateClickHouse(shards: 2, cluster: "two")
        defer { server.destroy() }
        for url in server.urls {
            // Each collector knows only its own shard's URL.
            let client = ClickHouseClient(configuration: .init(endpoints: [url], database: "mamc", cluster: "two"))
            try await ClickHouseMigrator(client: client).migrate()
            try await client.shutdown()
            let engines = try await server.query(
                "SELECT name, engine FROM system.tables WHERE database = 'mamc' ORDER BY name FORMAT TSV", url: url)
            #expect(
                engines == """
                    event_ids\tDistributed
                    event_ids_local\tReplacingMergeTree
                    incidents\tDistributed
                    incidents_local\tReplacingMergeTree
                    records\tDistributed
                    records_local\tReplacingMergeTree
                    schema_migrations\tReplacingMergeTree

                    """)
        }
    }
}
