public import TelemetryModel

/// The in-memory half of a commit's rollup update (``EventRollupDelta``: one row per hour and
/// per minute × event × app × detail × status code, plus latency sketches), on its own and without a
/// database. It exists for the component benchmarks (`Benchmarks/`), which can reach only
/// public API; the store itself never uses it.
public struct RollupDeltaProbe {
    private var delta = EventRollupDelta()

    public init() {}

    /// Adds one stored event, as the commit does for each event of a batch.
    public mutating func add(_ keys: RecordKeys, receivedAt: Int64) {
        delta.add(keys, receivedAt: receivedAt)
    }

    /// Rollup rows the commit would write: count rows plus latency-sketch rows, of both grains.
    public var rows: Int {
        delta.hours.counts.count + delta.hours.latencies.count + delta.minutes.counts.count + delta.minutes.latencies.count
    }

    /// Events that fell in the rollups' scope.
    public var events: Int { delta.events }
}
