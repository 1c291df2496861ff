import Metrics
import Synchronization

/// A minimal in-memory metrics backend: the Journal test target depends on Journal only, so
/// swift-metrics' MetricsTestKit is not available. Keeps the last value per label.
final class TestMetrics: MetricsFactory {
    private let values = Mutex<[String: Double]>([:])
    private let timings = Mutex<[String: [Int64]]>([:])

    func value(_ label: String) -> Double? { values.withLock { $0[label] } }
    func timerCount(_ label: String) -> Int { timings.withLock { $0[label]?.count ?? 0 } }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        Handler(label: label, owner: self)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        Handler(label: label, owner: self)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        Handler(label: label, owner: self)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        Handler(label: label, owner: self)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        Handler(label: label, owner: self)
    }

    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}

    fileprivate func add(_ label: String, _ amount: Double) {
        values.withLock { $0[label, default: 0] += amount }
    }

    fileprivate func set(_ label: String, _ value: Double) {
        values.withLock { $0[label] = value }
    }

    fileprivate func time(_ label: String, _ nanoseconds: Int64) {
        timings.withLock { $0[label, default: []].append(nanoseconds) }
    }

    private final class Handler: CounterHandler, FloatingPointCounterHandler, RecorderHandler, MeterHandler,
        TimerHandler, Sendable
    {
        let label: String
        let owner: TestMetrics

        init(label: String, owner: TestMetrics) {
            self.label = label
            self.owner = owner
        }

        func increment(by amount: Int64) { owner.add(label, Double(amount)) }
        func increment(by amount: Double) { owner.add(label, amount) }
        func decrement(by amount: Double) { owner.add(label, -amount) }
        func reset() { owner.set(label, 0) }
        func record(_ value: Int64) { owner.set(label, Double(value)) }
        func record(_ value: Double) { owner.set(label, value) }
        func set(_ value: Int64) { owner.set(label, Double(value)) }
        func set(_ value: Double) { owner.set(label, value) }
        func recordNanoseconds(_ duration: Int64) { owner.time(label, duration) }
    }
}
