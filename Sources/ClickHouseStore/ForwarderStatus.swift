import Metrics
public import StoreCore
import Synchronization
import TelemetryModel

/// What `/readyz`, `STATUS=` and ingest admission read of the forwarder: whether its last
/// attempt reached ClickHouse, and how much waits in the spool.
public final class ForwarderStatus: Sendable {
    public struct Snapshot: Sendable, Hashable {
        public var reachable = true
        public var lastError: String?
        public var lastErrorKind: String?
        public var depth = SpoolDepth()
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    func succeeded() {
        state.withLock {
            $0.reachable = true
            $0.lastError = nil
            $0.lastErrorKind = nil
        }
    }

    func failed(_ message: String, kind: String) {
        state.withLock {
            $0.reachable = false
            $0.lastError = message
            $0.lastErrorKind = kind
        }
    }

    func update(depth: SpoolDepth) { state.withLock { $0.depth = depth } }
}

/// The forwarder's metric families (names in ``MetricName``).
struct ForwarderMetrics: Sendable {
    let factory: any MetricsFactory
    let insertDuration: Timer
    let removalDuration: Timer
    let records: Gauge
    let bytes: Gauge
    let oldestAge: Gauge

    init(factory: any MetricsFactory) {
        self.factory = factory
        insertDuration = Timer(label: MetricName.forwarderInsertDuration.rawValue, factory: factory)
        removalDuration = Timer(label: MetricName.forwarderRemovalDuration.rawValue, factory: factory)
        records = Gauge(label: MetricName.spoolRecords.rawValue, factory: factory)
        bytes = Gauge(label: MetricName.spoolBytes.rawValue, factory: factory)
        oldestAge = Gauge(label: MetricName.spoolOldestAge.rawValue, factory: factory)
    }

    func shipped(_ n: Int, env: TelemetryEnvironment) {
        Counter(label: MetricName.forwarderShippedRecords.rawValue, dimensions: [("env", env.rawValue)], factory: factory)
            .increment(by: n)
    }

    func error(_ kind: String) {
        Counter(label: MetricName.forwarderErrors.rawValue, dimensions: [("kind", kind)], factory: factory).increment()
    }

    func record(depth: SpoolDepth, nowMs: Int64) {
        records.record(depth.records)
        bytes.record(depth.bytes)
        oldestAge.record(depth.oldestReceivedAt.map { Double(max(0, nowMs - $0)) / 1000 } ?? 0)
    }
}
