public import ServiceLifecycle

/// Owns the lifetime of the ClickHouse client a daemon shares between the forwarder, the
/// retention passes and the reads: none of them closes it, so none can close it under
/// another. Listed before them in a service group (which stops services last to first), it
/// closes the client's connections only once every one of them has returned.
public struct ClickHouseClientService: Service {
    public let client: ClickHouseClient

    public init(client: ClickHouseClient) {
        self.client = client
    }

    /// Waits for the group's graceful shutdown (or cancellation), then closes the client.
    public func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
