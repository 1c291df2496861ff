public import ClickHouseStore
public import Foundation

/// Which backend keeps the records. `sqlite` (the default) needs nothing else; `clickhouse`
/// keeps the embedded store as a spool and forwards its committed batches to ClickHouse.
public enum StoreBackend: String, Sendable, CaseIterable {
    case sqlite
    case clickhouse
}

/// The ClickHouse backend's settings as configuration gives them (`clickhouse.*`,
/// `collector.id`). The password is read from `clickhouse.passwordFile` or the
/// `MAMTELEMETRY_CLICKHOUSE_PASSWORD` variable, never from a flag.
public struct ClickHouseBackendConfiguration: Sendable, Hashable {
    public var urls: [URL] = [URL(string: "http://127.0.0.1:8123")!]
    public var database = "mam"
    public var cluster: String?
    public var user: String?
    public var passwordFile: String?
    public var password: String?
    /// Past this many compressed bytes waiting in the spool, ingest answers 503.
    public var spoolMaxBytes: Int64 = 1 << 30
    /// This collector's number in record ids (0-255); required with the clickhouse backend.
    public var collectorID: UInt8?
    /// Whether ingest asks ClickHouse's `event_ids` for a request's ids before acknowledging
    /// (``ClickHouseRetryCheck``): off where the load balancer sends a client's retries to the
    /// collector that took the original, which then recognises them alone.
    public var recogniseRetries = true
    /// gzip on the wire to ClickHouse: by default to every endpoint but a loopback one.
    public var compression = ClickHouseWireCompression.auto

    public init() {}

    /// The client's view, with the password resolved.
    public var client: ClickHouseConfiguration {
        ClickHouseConfiguration(
            endpoints: urls, database: database, cluster: cluster, user: user, password: password, compression: compression)
    }
}
