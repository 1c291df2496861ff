import ControlState
import Foundation
import Metrics
import Synchronization
import TelemetryModel

/// Per-token ingest rate limits: a token bucket of records per token, so one
/// misbehaving relay cannot take the whole ingest capacity. Past its budget a token gets
/// 429 with `Retry-After` (1DS: retry later); others are unaffected. 0 turns it off.
final class TokenRateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    /// Read at every request, so a reloaded rate applies at once.
    private let rate: @Sendable () -> Int
    private let burstSeconds: Double
    private let buckets = Mutex<[String: Bucket]>([:])
    private let clock: any WallClock
    private let factory: any MetricsFactory

    init(recordsPerSecond: @escaping @Sendable () -> Int, burstSeconds: Double = 2, clock: any WallClock, metrics: any MetricsFactory) {
        factory = metrics
        rate = recordsPerSecond
        self.clock = clock
        self.burstSeconds = burstSeconds
    }

    /// Takes `records` from the token's bucket or refuses with the wait needed.
    func take(_ records: Int, token: Token?) throws(IngestRefusal) {
        let recordsPerSecond = Double(rate())
        guard recordsPerSecond > 0, let token, !token.scopes.contains(.admin) else { return }
        let burst = max(recordsPerSecond * burstSeconds, 1)
        let now = clock.monotonicNow()
        let wait: Double? = buckets.withLock { all in
            var b = all[token.id] ?? Bucket(tokens: burst, updated: now)
            let seconds = now.seconds(since: b.updated)
            b.tokens = min(burst, b.tokens + seconds * recordsPerSecond)
            b.updated = now
            // A request larger than the whole burst may pass when the bucket is full, so a
            // big batch is slowed, never refused forever.
            let cost = min(Double(records), burst)
            if b.tokens >= cost {
                b.tokens -= cost
                all[token.id] = b
                return nil
            }
            all[token.id] = b
            return (cost - b.tokens) / recordsPerSecond
        }
        if let wait {
            Counter(label: MetricName.ingestRefused.rawValue, dimensions: [("reason", "token_rate_limit")], factory: factory).increment()
            throw .rateLimited(
                token: token.name, recordsPerSecond: Int(recordsPerSecond), retryAfterSeconds: max(1, Int(wait.rounded(.up))))
        }
    }
}
