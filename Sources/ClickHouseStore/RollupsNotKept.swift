public import StoreCore

/// A rollup rebuild asked of the ClickHouse backend, which keeps no rollups: its stats are
/// `GROUP BY`s over the records in ClickHouse on every request, so there is nothing to
/// rebuild. The HTTP layer answers it with 409 `no_rollups` and this message.
public struct RollupsNotKept: Error, Sendable, Hashable, CustomStringConvertible, ClientDescribable {
    public init() {}

    public var description: String {
        "this collector stores records in ClickHouse, which keeps no rollups: stats are computed from the records in ClickHouse on every request, so there is nothing to rebuild"
    }

    public var clientDescription: String { description }
}
