import ControlState
import Metrics
import Synchronization
import TelemetryModel
import TelemetryStore
import TestSupport
import Testing

@testable import TelemetryServer

/// The per-token records-per-second budget: a bucket of `rate × burstSeconds` records that
/// refills with time, per token, so one busy relay cannot take every other's share.
@Suite struct TokenRateLimiterTests {
    static func token(_ id: String, scopes: Set<Scope> = [.ingest]) -> Token {
        Token(id: id, name: "relay-\(id)", scopes: scopes, apps: [], createdAt: 0, revoked: false)
    }

    static func refusal(_ body: () throws -> Void) -> IngestRefusal? {
        do {
            try body()
            return nil
        } catch let refusal as IngestRefusal {
            return refusal
        } catch {
            Issue.record("not a refusal: \(error)")
            return nil
        }
    }

    @Test func aTokenGetsItsBurstThenWaitsForTheRefill() {
        let clock = ManualClock()
        let limiter = TokenRateLimiter(recordsPerSecond: { 10 }, burstSeconds: 2, clock: clock, metrics: NOOPMetricsHandler.instance)
        let a = Self.token("a")
        #expect(Self.refusal { try limiter.take(15, token: a) } == nil)
        #expect(Self.refusal { try limiter.take(5, token: a) } == nil, "the burst is 20 records")
        guard case .rateLimited(let name, let rate, let wait)? = Self.refusal({ try limiter.take(5, token: a) }) else {
            Issue.record("the 21st record within the burst was not refused")
            return
        }
        #expect(name == "relay-a" && rate == 10)
        #expect(wait == 1, "5 records at 10/s need half a second, rounded up to a whole Retry-After")
        // Another token has its own bucket.
        #expect(Self.refusal { try limiter.take(20, token: Self.token("b")) } == nil)
        clock.advance(.milliseconds(500))
        #expect(Self.refusal { try limiter.take(5, token: a) } == nil, "half a second refills 5 records")
        #expect(Self.refusal { try limiter.take(1, token: a) } != nil)
        // The bucket never holds more than the burst, however long the token was idle.
        clock.advance(.seconds(3600))
        #expect(Self.refusal { try limiter.take(20, token: a) } == nil)
        #expect(Self.refusal { try limiter.take(1, token: a) } != nil)
    }

    @Test func aBatchLargerThanTheBurstPassesWhenTheBucketIsFull() {
        let clock = ManualClock()
        let limiter = TokenRateLimiter(recordsPerSecond: { 10 }, burstSeconds: 2, clock: clock, metrics: NOOPMetricsHandler.instance)
        let a = Self.token("a")
        #expect(Self.refusal { try limiter.take(500, token: a) } == nil, "slowed, never refused forever")
        guard case .rateLimited(_, _, let wait)? = Self.refusal({ try limiter.take(500, token: a) }) else {
            Issue.record("a second big batch with an empty bucket was not refused")
            return
        }
        #expect(wait == 2, "the big batch costs one whole burst: 20 records at 10/s")
        clock.advance(.seconds(2))
        #expect(Self.refusal { try limiter.take(500, token: a) } == nil)
    }

    @Test func adminTokensAndAZeroRateAreNotLimitedAndAReloadedRateAppliesAtOnce() {
        let clock = ManualClock()
        let rate = Mutex(0)
        let limiter = TokenRateLimiter(
            recordsPerSecond: { rate.withLock { $0 } }, burstSeconds: 1, clock: clock, metrics: NOOPMetricsHandler.instance)
        let a = Self.token("a")
        #expect(Self.refusal { try limiter.take(1_000_000, token: a) } == nil, "0 turns the limit off")
        rate.withLock { $0 = 5 }
        #expect(Self.refusal { try limiter.take(5, token: a) } == nil)
        #expect(Self.refusal { try limiter.take(1, token: a) } != nil, "the reloaded rate applies to the next request")
        let admin = Self.token("admin", scopes: [.admin])
        for _ in 0..<10 { #expect(Self.refusal { try limiter.take(100, token: admin) } == nil) }
        #expect(Self.refusal { try limiter.take(100, token: nil) } == nil, "no caller: the auth check answers, not the limiter")
    }
}
