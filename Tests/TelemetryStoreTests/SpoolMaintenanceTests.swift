import Foundation
import StoreCore
import TelemetryModel
import Testing

@testable import TelemetryStore

/// The spool's retention on a remote backend: shipped batches leave, the retry-recognition
/// ids of their records stay for the retry window, and nothing unshipped is ever aged out.
@Suite struct SpoolMaintenanceTests {
    static let day: Int64 = 86_400_000

    @Test func aRetryAfterShippingIsRecognisedUntilTheWindowPasses() async throws {
        let f = try StoreFixture()
        let now: Int64 = 100 * Self.day
        let first = try await f.store.append(
            [StoreFixture.event(time: 1, eventId: "e1")], kind: .event, env: .prod, receivedAt: now, incident: nil)
        #expect(first.stored == 1)
        let batches = try await f.store.unshippedBatches(env: .prod, after: 0, limit: 10)
        try await f.store.removeShipped(env: .prod, batchIDs: batches.map(\.batchID))
        #expect(try await f.store.depth(env: .prod).records == 0)
        // The client did not see the acknowledgement and sends the record again.
        let retry = try await f.store.append(
            [StoreFixture.event(time: 1, eventId: "e1")], kind: .event, env: .prod, receivedAt: now + 1000, incident: nil)
        #expect(retry.stored == 0 && retry.duplicates == 1)
        // Passes within the window keep the id; the first pass notes where the window starts.
        #expect(try await f.store.maintain(env: .prod, limits: RetentionPolicy().prod, nowMs: now + 2000).retryIDs == 0)
        let late = now + 2000 + SpoolRetryWindow.seconds * 1000 - 1
        #expect(try await f.store.maintain(env: .prod, limits: RetentionPolicy().prod, nowMs: late).retryIDs == 0)
        let again = try await f.store.append(
            [StoreFixture.event(time: 1, eventId: "e1")], kind: .event, env: .prod, receivedAt: late, incident: nil)
        #expect(again.duplicates == 1)
        // Past the window the id goes (ids noted after the first mark stay for the next one).
        let past = now + 2000 + SpoolRetryWindow.seconds * 1000
        #expect(try await f.store.maintain(env: .prod, limits: RetentionPolicy().prod, nowMs: past).retryIDs == 1)
        let afterWindow = try await f.store.append(
            [StoreFixture.event(time: 1, eventId: "e1")], kind: .event, env: .prod, receivedAt: past, incident: nil)
        #expect(afterWindow.stored == 1 && afterWindow.duplicates == 0)
        await f.close()
    }

    @Test func maintenanceNeverAgesOutAnUnshippedBatch() async throws {
        let f = try StoreFixture()
        let now: Int64 = 100 * Self.day
        _ = try await f.store.append(
            [StoreFixture.event(time: 1, eventId: "old")], kind: .event, env: .prod, receivedAt: now - 40 * Self.day, incident: nil)
        // The embedded store's own retention would delete this batch (30 days of events).
        let limits = RetentionPolicy().prod
        _ = try await f.store.maintain(env: .prod, limits: limits, nowMs: now)
        _ = try await f.store.maintain(env: .prod, limits: limits, nowMs: now + 60 * Self.day)
        let depth = try await f.store.depth(env: .prod)
        #expect(depth.records == 1 && depth.oldestReceivedAt == now - 40 * Self.day)
        await f.close()
    }
}
