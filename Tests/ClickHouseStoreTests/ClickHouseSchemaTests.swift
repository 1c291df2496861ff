import ClickHouseStore
import Foundation
import TestSupport
import Testing

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
                mamt\tincidents
                mamt\trecords
                mamt\tschema_migrations
                mamt_ppe\tincidents
                mamt_ppe\trecords
                mamt_ppe\tschema_migrations

                """)
        _ = try await server.query("INSERT INTO mamt_ppe.schema_migrations (version, summary) VALUES (99, 'from the future')")
        await #expect(throws: ClickHouseSchemaError.self) { try await migrator.migrate() }
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
                    incidents\tDistributed
                    incidents_local\tReplacingMergeTree
                    records\tDistributed
                    records_local\tReplacingMergeTree
                    schema_migrations\tReplacingMergeTree

                    """)
        }
    }
}
