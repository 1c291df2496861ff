import TelemetryModel

/// Why the ingest path refused a request as a whole: nothing of it was stored. Each case
/// carries the limit or field it names, so the one HTTP mapping (`IngestRefusal+HTTP`)
/// answers with the right status and message and tests match cases, not strings.
enum IngestRefusal: Error, Sendable {
    /// No bearer token: ingest stores records for a caller only.
    case unauthenticated
    /// The wire body is longer than `maxBodyBytes` (`declared` when Content-Length said so).
    case bodyTooLarge(declared: Int?, limit: Int)
    /// Undoing Content-Encoding passed a decompression limit; `detail` names it.
    case decompressedTooLarge(detail: String)
    case unsupportedEncoding(detail: String)
    case badEncoding(detail: String)
    /// The body could not be read for a reason no other case names.
    case undecodable(detail: String)
    /// The decoded body as a whole broke a request limit or lacks a parameter.
    case request(RequestLimitError)
    /// An OTLP body that is not an export request.
    case invalidOTLP(detail: String)
    /// A diagnostic upload that cannot be read or routed.
    case invalidUpload(detail: String)
    /// The caller's token may not store any of the records (or the upload's app).
    case appNotAllowed(token: String, boundTo: [String])
    /// The token spent its records-per-second budget; retry after the wait.
    case rateLimited(token: String, recordsPerSecond: Int, retryAfterSeconds: Int)
    /// The data disk passed its high-water mark.
    case storageFull(detail: String)
    /// The commit queue holds more than `maxQueuedRecords`.
    case queueFull(limit: Int)
    /// The spool holds more than `clickhouse.spoolMaxBytes` waiting for ClickHouse.
    case spoolFull(limit: Int64, waiting: Int64)
    /// Ingest holds `maxInFlightBytes` already: at the door (after waiting its turn), or
    /// when the request's own decompressed bytes or decoded records took it there.
    case inFlightFull(limit: Int, stage: InFlightStage)
    /// The store refused the write (`transient`: it cannot take writes now) or failed to commit.
    case storeUnavailable(detail: String, transient: Bool)
    /// Every record was refused; the result lists each line's reason.
    case noValidRecords(IngestResult)
    /// The body holds no records at all.
    case emptyBody
}

extension IngestRefusal {
    /// Where a request met the in-flight limit.
    enum InFlightStage: Sendable, Hashable {
        /// Before its body was read: the requests ahead did not make room within the wait.
        case atTheDoor
        /// While its body was being decompressed.
        case inflating
        /// Once its records were decoded (their memory is charged too).
        case decoded
    }
}
