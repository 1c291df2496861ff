public import Foundation

/// Where and how to reach ClickHouse, as configuration gives it. The password never comes
/// from the command line (where every user of the host can read it in `ps`): the daemon
/// reads it from a file or its environment and hands it over here.
public struct ClickHouseConfiguration: Sendable, Hashable {
    /// HTTP endpoints (`http://host:8123`), tried in order; the next is used when one
    /// cannot be reached. With a cluster, these are the shard(s) this collector writes to.
    public var endpoints: [URL]
    /// Production data lives here; PPE in `<database>_ppe`, never a shared table.
    public var database: String
    /// The `remote_servers` cluster the `Distributed` tables span; nil: plain tables.
    public var cluster: String?
    public var user: String?
    public var password: String?
    /// How long one request may take before it is a timeout.
    public var requestTimeoutSeconds: Int64
    /// zlib level of compressed request bodies.
    public var compressionLevel: Int32
    /// Which endpoints get gzip on the wire.
    public var compression: ClickHouseWireCompression

    public init(
        endpoints: [URL], database: String = "mam", cluster: String? = nil, user: String? = nil, password: String? = nil,
        requestTimeoutSeconds: Int64 = 30, compressionLevel: Int32 = 3,
        compression: ClickHouseWireCompression = .auto
    ) {
        self.endpoints = endpoints
        self.database = database
        self.cluster = cluster
        self.user = user
        self.password = password
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.compressionLevel = compressionLevel
        self.compression = compression
    }
}
