/// Where the forwarder's record inserts go: ClickHouse's HTTP interface (``ClickHouseClient``).
/// A test wraps the client to fail one insert of several in flight.
public protocol ClickHouseInserting: Sendable {
    /// Returns once ClickHouse acknowledged the insert; see ``ClickHouseClient/insert(into:database:columns:format:rows:settings:)``.
    func insert(
        into table: String, database: String, columns: [String], format: StaticString, rows: [UInt8], settings: [(String, String)]
    ) async throws
}

extension ClickHouseClient: ClickHouseInserting {}
