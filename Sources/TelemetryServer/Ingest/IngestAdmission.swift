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
/// The in-flight bytes are the wire body (reserved at the door), every decompressed byte
/// (reserved as the inflater produces it) and the decoded records (reserved once decoded,
/// `DecodedRecord.heldBytes`): a small gzip body that inflates to the decompression limit
/// costs what it really costs, so many of them cannot all be admitted. The oldest request in
/// flight may always grow (bounded by the decompression limits), so bodies racing for the
/// budget never all refuse one another: at least one finishes.
///
/// A request that does not fit waits at the door, in arrival order, up to `maxWait` for
/// the requests ahead of it to finish, and only then is refused. Its body is not read while
/// it waits (it stays in the socket), so waiting costs no memory: a daemon behind its clients
/// holds at most the budget, instead of every connection's records at once, and a burst is
/// smoothed instead of answered 503.
final class IngestAdmission: Sendable {
    struct Limits: Sendable, Hashable {
        var maxInFlightBytes: Int
        var maxQueuedRecords: Int
        /// How long a request that does not fit waits for room before it is refused.
        var maxWait: Duration = .zero
    }

    /// A request waiting for room, resumed with its ticket when admitted or nil when it
    /// gave up (waited `maxWait`, or its client went away).
    private struct Waiter {
        var id: Int
        var bytes: Int
        var continuation: CheckedContinuation<Int?, Never>
    }

    /// The bytes in flight and who holds them, in admission order, and who waits.
    private struct InFlight {
        var bytes = 0
        var nextTicket = 0
        var tickets: Set<Int> = []
        var waiting: [Waiter] = []
        var nextWaiter = 0

        func fits(_ bytes: Int, limit: Int) -> Bool { self.bytes == 0 || self.bytes + bytes <= limit }

        /// Takes `bytes` under a new ticket.
        mutating func take(_ bytes: Int) -> Int {
            self.bytes += bytes
            nextTicket += 1
            tickets.insert(nextTicket)
            return nextTicket
        }

        /// Admits the waiters at the head of the line that fit now; the caller resumes them
        /// outside the lock.
        mutating func admitWaiting(limit: Int) -> [(CheckedContinuation<Int?, Never>, Int?)] {
            var admitted: [(CheckedContinuation<Int?, Never>, Int?)] = []
            while let first = waiting.first, fits(first.bytes, limit: limit) {
                waiting.removeFirst()
                admitted.append((first.continuation, take(first.bytes)))
            }
            return admitted
        }
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
        guard let ticket = await enter(bytes) else {
            refused("inflight_bytes")
            throw IngestRefusal.inFlightFull(limit: limits.maxInFlightBytes, stage: .atTheDoor)
        }
        let reservation = InFlightReservation(admission: self, ticket: ticket, bytes: bytes)
        defer { reservation.release() }
        return try await body(reservation)
    }

    /// Bytes held by admitted requests now.
    var inFlightBytes: Int { inFlight.withLock { $0.bytes } }

    /// Requests waiting for room now.
    var waitingCount: Int { inFlight.withLock { $0.waiting.count } }

    /// Takes `bytes` of the budget: at once when nobody waits and they fit (an idle daemon
    /// takes any body, so one near the limit is never refused forever), else after the
    /// requests ahead have made room; nil after `maxWait` or when the task is cancelled.
    private func enter(_ bytes: Int) async -> Int? {
        let limit = limits.maxInFlightBytes
        enum Door {
            case admitted(ticket: Int, total: Int)
            case refused
            case wait(id: Int)
        }
        let door = inFlight.withLock { f -> Door in
            if f.waiting.isEmpty, f.fits(bytes, limit: limit) { return .admitted(ticket: f.take(bytes), total: f.bytes) }
            guard limits.maxWait > .zero else { return .refused }
            f.nextWaiter += 1
            return .wait(id: f.nextWaiter)
        }
        let id: Int
        switch door {
        case .admitted(let ticket, let total):
            depthGauge.record(total)
            return ticket
        case .refused:
            return nil
        case .wait(let waiter):
            id = waiter
        }
        let maxWait = limits.maxWait
        let deadline = ContinuousClock.now + maxWait
        let timer = Task { [weak self] in
            try await Task.sleep(until: deadline)
            self?.giveUp(id)
        }
        defer { timer.cancel() }
        let ticket = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                let ready = inFlight.withLock { f -> [(CheckedContinuation<Int?, Never>, Int?)] in
                    f.waiting.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    // Room may have been made between the first look and now.
                    return f.admitWaiting(limit: limit)
                }
                for (waiter, ticket) in ready { waiter.resume(returning: ticket) }
                // The timer or the cancellation may have fired before the waiter was in line.
                if Task.isCancelled || ContinuousClock.now >= deadline { giveUp(id) }
            }
        } onCancel: {
            giveUp(id)
        }
        depthGauge.record(inFlight.withLock { $0.bytes })
        return ticket
    }

    /// Takes a waiter out of the line (resumed with nil) if it is still in it; the requests
    /// behind it may fit now.
    private func giveUp(_ id: Int) {
        let resume = inFlight.withLock { f -> [(CheckedContinuation<Int?, Never>, Int?)] in
            guard let at = f.waiting.firstIndex(where: { $0.id == id }) else { return [] }
            let waiter = f.waiting.remove(at: at)
            return [(waiter.continuation, nil)] + f.admitWaiting(limit: limits.maxInFlightBytes)
        }
        for (waiter, ticket) in resume { waiter.resume(returning: ticket) }
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
        let (left, admitted) = inFlight.withLock { f -> (Int, [(CheckedContinuation<Int?, Never>, Int?)]) in
            f.bytes -= bytes
            f.tickets.remove(ticket)
            let admitted = f.admitWaiting(limit: limits.maxInFlightBytes)
            return (f.bytes, admitted)
        }
        for (waiter, ticket) in admitted { waiter.resume(returning: ticket) }
        depthGauge.record(left)
    }

    /// The refusal when a request's decompressed bytes or decoded records would pass the
    /// budget after it was admitted.
    fileprivate func growthRefusal(_ stage: IngestRefusal.InFlightStage) -> IngestRefusal {
        refused("inflight_bytes")
        return .inFlightFull(limit: limits.maxInFlightBytes, stage: stage)
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

    /// Reserves `bytes` more of decompressed body, or refuses naming `maxInFlightBytes`.
    func grow(by bytes: Int) throws(IngestRefusal) {
        try grow(by: bytes, stage: .inflating)
    }

    /// Reserves the memory of the request's decoded records, or refuses naming
    /// `maxInFlightBytes` (nothing is stored then).
    func holdDecoded(_ bytes: Int) throws(IngestRefusal) {
        try grow(by: bytes, stage: .decoded)
    }

    private func grow(by bytes: Int, stage: IngestRefusal.InFlightStage) throws(IngestRefusal) {
        try held.withLock { (mine: inout Int) throws(IngestRefusal) in
            guard admission.grow(ticket, by: bytes) else { throw admission.growthRefusal(stage) }
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
