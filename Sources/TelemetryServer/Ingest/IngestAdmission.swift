import Metrics
import StoreCore
import Synchronization
import TelemetryModel

/// Backpressure at the door: a bound on the bytes ingest requests hold in
/// memory at once, and on the records waiting for the committer. Past either bound the
/// request is answered 503 with `Retry-After`, so memory stays bounded and nothing is
/// silently dropped; past the disk high-water mark it is 507. The client keeps the data and
/// retries (1DS convention).
///
/// The in-flight bytes are the wire body (reserved at the door) plus every decompressed
/// byte, reserved as the inflater produces it: a small gzip body that inflates to the
/// decompression limit costs what it really costs, so many of them cannot all be admitted.
/// The oldest request in flight may always grow (bounded by the decompression limits), so
/// bodies racing for the budget never all refuse one another: at least one finishes.
final class IngestAdmission: Sendable {
    struct Limits: Sendable, Hashable {
        var maxInFlightBytes: Int
        var maxQueuedRecords: Int
    }

    /// The bytes in flight and who holds them, in admission order.
    struct InFlight {
        var bytes = 0
        var nextTicket = 0
        var tickets: Set<Int> = []
    }

    private let limits: Limits
    private let inFlight = Mutex(InFlight())
    private let commitQueue: any CommitQueue
    private let disk: DiskGuard?
    /// The waiting spool bytes and their cap, when records are forwarded to ClickHouse.
    private let spool: (@Sendable () -> (waiting: Int64, limit: Int64))?
    private let depthGauge: Gauge
    private let factory: any MetricsFactory

    init(
        limits: Limits, commitQueue: any CommitQueue, disk: DiskGuard?, metrics: any MetricsFactory,
        spool: (@Sendable () -> (waiting: Int64, limit: Int64))? = nil
    ) {
        self.spool = spool
        factory = metrics
        depthGauge = Gauge(label: MetricName.ingestInFlightBytes.rawValue, factory: metrics)
        self.limits = limits
        self.commitQueue = commitQueue
        self.disk = disk
    }

    /// Admits a request holding `bytes` (the declared body size, or the body limit when
    /// undeclared) and runs `body` with its reservation, which grows as the body inflates;
    /// everything is given back when `body` ends. Refuses before `body` runs otherwise.
    func admit<T>(bytes: Int, _ body: (InFlightReservation) async throws -> T) async throws -> T {
        if let message = disk?.refusal() {
            refused("disk_high_water")
            throw IngestRefusal.storageFull(detail: message)
        }
        if commitQueue.queuedRecords > limits.maxQueuedRecords {
            refused("queue_full")
            throw IngestRefusal.queueFull(limit: limits.maxQueuedRecords)
        }
        if let (waiting, limit) = spool?(), waiting > limit {
            refused("spool_full")
            throw IngestRefusal.spoolFull(limit: limit, waiting: waiting)
        }
        let admitted = inFlight.withLock { f -> (ticket: Int, total: Int)? in
            // An idle daemon takes any body, so one near the limit is never refused forever.
            guard f.bytes == 0 || f.bytes + bytes <= limits.maxInFlightBytes else { return nil }
            f.bytes += bytes
            f.nextTicket += 1
            f.tickets.insert(f.nextTicket)
            return (f.nextTicket, f.bytes)
        }
        guard let admitted else {
            refused("inflight_bytes")
            throw IngestRefusal.inFlightFull(limit: limits.maxInFlightBytes, whileInflating: false)
        }
        depthGauge.record(admitted.total)
        let reservation = InFlightReservation(admission: self, ticket: admitted.ticket, bytes: bytes)
        defer { reservation.release() }
        return try await body(reservation)
    }

    /// Adds `bytes` to a reservation unless that passes the limit; the oldest request in
    /// flight may always grow.
    fileprivate func grow(_ ticket: Int, by bytes: Int) -> Bool {
        let total = inFlight.withLock { f -> Int? in
            guard f.bytes + bytes <= limits.maxInFlightBytes || f.tickets.min() == ticket else { return nil }
            f.bytes += bytes
            return f.bytes
        }
        guard let total else { return false }
        depthGauge.record(total)
        return true
    }

    fileprivate func release(_ ticket: Int, bytes: Int) {
        let left = inFlight.withLock { f -> Int in
            f.bytes -= bytes
            f.tickets.remove(ticket)
            return f.bytes
        }
        depthGauge.record(left)
    }

    /// The refusal when a body's decompressed bytes would pass the budget mid-inflate.
    fileprivate var inflateRefusal: IngestRefusal {
        refused("inflight_bytes")
        return .inFlightFull(limit: limits.maxInFlightBytes, whileInflating: true)
    }

    private func refused(_ reason: String) {
        Counter(label: MetricName.ingestRefused.rawValue, dimensions: [("reason", reason)], factory: factory).increment()
    }
}

/// The in-flight bytes one admitted request holds. Handed to the body decoder, which grows
/// it by each chunk of decompressed output before keeping that chunk.
final class InFlightReservation: Sendable {
    private let admission: IngestAdmission
    private let ticket: Int
    private let held: Mutex<Int>

    fileprivate init(admission: IngestAdmission, ticket: Int, bytes: Int) {
        self.admission = admission
        self.ticket = ticket
        held = Mutex(bytes)
    }

    /// Reserves `bytes` more, or refuses naming `maxInFlightBytes`.
    func grow(by bytes: Int) throws(IngestRefusal) {
        try held.withLock { (mine: inout Int) throws(IngestRefusal) in
            guard admission.grow(ticket, by: bytes) else { throw admission.inflateRefusal }
            mine += bytes
        }
    }

    fileprivate func release() {
        held.withLock { mine in
            admission.release(ticket, bytes: mine)
            mine = 0
        }
    }
}
