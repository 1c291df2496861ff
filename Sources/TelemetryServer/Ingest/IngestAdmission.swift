import HTTPTypes
import Hummingbird
import Metrics
import Synchronization
import TelemetryStore

/// Backpressure at the door (SPEC §3, §8): a bound on the bytes of ingest requests being
/// decoded and committed at once, and on the records waiting for the committer. Past
/// either bound the request is answered 503 with `Retry-After` before its body is read, so
/// memory stays bounded and nothing is silently dropped; past the disk high-water mark it
/// is 507. The client keeps the data and retries (1DS convention).
final class IngestAdmission: Sendable {
    struct Limits: Sendable, Hashable {
        var maxInFlightBytes: Int
        var maxQueuedRecords: Int
    }

    private let limits: Limits
    private let inFlight = Mutex(0)
    private let committer: GroupCommitter
    private let disk: DiskGuard?
    private let depthGauge = Gauge(label: "mamtelemetry_ingest_inflight_bytes")

    init(limits: Limits, committer: GroupCommitter, disk: DiskGuard?) {
        self.limits = limits
        self.committer = committer
        self.disk = disk
    }

    /// Reserves `bytes` (the declared body size, or the body limit when undeclared) for the
    /// duration of `body`, or refuses.
    func admit<T>(bytes: Int, _ body: () async throws -> T) async throws -> T {
        if let message = disk?.refusal() {
            Counter(label: "mamtelemetry_ingest_refused_total", dimensions: [("reason", "disk_high_water")]).increment()
            throw APIError(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), code: "storage_full", message: message, headers: [.retryAfter: "60"])
        }
        if committer.queuedRecords > limits.maxQueuedRecords {
            Counter(label: "mamtelemetry_ingest_refused_total", dimensions: [("reason", "queue_full")]).increment()
            throw APIError.unavailable(
                "the commit queue holds more than maxQueuedRecords=\(limits.maxQueuedRecords) records; retry later", retryAfter: 1)
        }
        let admitted = inFlight.withLock { current -> Int? in
            // One request alone may always proceed, so a body near the limit is never refused forever.
            guard current == 0 || current + bytes <= limits.maxInFlightBytes else { return nil }
            current += bytes
            return current
        }
        guard let now = admitted else {
            Counter(label: "mamtelemetry_ingest_refused_total", dimensions: [("reason", "inflight_bytes")]).increment()
            throw APIError.unavailable(
                "ingest is at its in-flight limit maxInFlightBytes=\(limits.maxInFlightBytes); retry later", retryAfter: 1)
        }
        depthGauge.record(now)
        defer {
            let left = inFlight.withLock { current -> Int in
                current -= bytes
                return current
            }
            depthGauge.record(left)
        }
        return try await body()
    }
}
