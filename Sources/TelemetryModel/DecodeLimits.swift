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
    /// Most values one OTLP request may decode into (every attribute, array element, nested
    /// list and record): what decoding costs in memory, far beyond the wire bytes.
    public var maxValuesPerRequest: Int

    public init(
        maxLineBytes: Int = 65_536, maxRecordsPerRequest: Int = 10_000, maxDepth: Int = 16,
        maxFields: Int = 256, maxStringBytes: Int = 32_768, maxValuesPerRequest: Int = 1_000_000
    ) {
        self.maxLineBytes = maxLineBytes
        self.maxRecordsPerRequest = maxRecordsPerRequest
        self.maxDepth = maxDepth
        self.maxFields = maxFields
        self.maxStringBytes = maxStringBytes
        self.maxValuesPerRequest = maxValuesPerRequest
    }

    public static let `default` = DecodeLimits()

    /// For walking text whose parts are limited on their own (a whole request, or an
    /// upload's records): no size limits, but nesting stays bounded so a hostile body
    /// cannot exhaust the stack.
    static let walkOnly = DecodeLimits(
        maxLineBytes: .max, maxRecordsPerRequest: .max, maxDepth: 64, maxFields: .max, maxStringBytes: .max,
        maxValuesPerRequest: .max)
}

/// The request as a whole cannot be taken: nothing of it is stored. Typed, so the ingest
/// path maps each case to its answer without comparing limit names.
public enum RequestLimitError: Error, Sendable, Hashable {
    /// More records than `maxRecordsPerRequest` (`held` when the decoder counted them all);
    /// `advice` tells the sender how to split.
    case tooManyRecords(limit: Int, held: Int?, advice: String)
    /// The body's records need a request parameter that was not given; `hint` says where.
    case missingParameter(name: String, hint: String)
    /// A request's outer object (a diagnostic upload around its records) broke `limit`.
    case outerObject(limit: String, value: Int)
    /// Decoding would make more than `maxValuesPerRequest` values (`OTLPDecodeCost`).
    case tooManyValues(limit: Int)

    /// The name of the limit or parameter, as the refusal names it.
    public var limit: String {
        switch self {
        case .tooManyRecords: "maxRecordsPerRequest"
        case .missingParameter(let name, _): name
        case .outerObject(let limit, _): limit
        case .tooManyValues: "maxValuesPerRequest"
        }
    }

    public var message: String {
        switch self {
        case .tooManyRecords(let limit, let held, let advice):
            if let held {
                "request holds \(held) records, more than maxRecordsPerRequest=\(limit); \(advice)"
            } else {
                "request holds more than maxRecordsPerRequest=\(limit) records; \(advice)"
            }
        case .missingParameter(_, let hint): hint
        case .outerObject(let limit, let value): "the upload's outer object exceeds the limit \(limit)=\(value)"
        case .tooManyValues(let limit):
            "request holds more than maxValuesPerRequest=\(limit) values (attributes, array elements, lists, records) to decode; "
                + "export smaller batches (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE) or fewer attributes per record"
        }
    }

    /// What a native body's sender is told to do with too many records.
    public static let splitAdvice = "split it into smaller batches"
}
