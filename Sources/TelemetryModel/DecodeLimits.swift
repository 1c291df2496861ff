/// Input limits applied while decoding. Each refusal names the limit and its value
/// so a client developer can fix the sender without guessing.
public struct DecodeLimits: Sendable, Hashable, Codable {
    /// Longest accepted line / array element, in bytes.
    public var maxLineBytes: Int
    /// Most records in one request; more is refused whole (413) rather than half-taken.
    public var maxRecordsPerRequest: Int
    /// Deepest JSON nesting in a record.
    public var maxDepth: Int
    /// Most object members in a record, counted at every depth.
    public var maxFields: Int
    /// Longest JSON string value or key, in bytes.
    public var maxStringBytes: Int

    public init(
        maxLineBytes: Int = 65_536, maxRecordsPerRequest: Int = 10_000, maxDepth: Int = 16,
        maxFields: Int = 256, maxStringBytes: Int = 32_768
    ) {
        self.maxLineBytes = maxLineBytes
        self.maxRecordsPerRequest = maxRecordsPerRequest
        self.maxDepth = maxDepth
        self.maxFields = maxFields
        self.maxStringBytes = maxStringBytes
    }

    public static let `default` = DecodeLimits()
}

/// The request as a whole broke a limit: nothing of it is taken.
public struct RequestLimitError: Error, Sendable, Hashable {
    public var limit: String
    public var value: Int
    public var message: String

    public init(limit: String, value: Int, message: String) {
        self.limit = limit
        self.value = value
        self.message = message
    }
}
