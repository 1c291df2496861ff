import Foundation
import HTTPTypes
import StoreCore
import Synchronization
import TelemetryStore
import Testing

@testable import TelemetryServer

/// One POST with prod and PPE records: when the second environment's commit fails the
/// client gets 503 with Retry-After and nothing of the request is stored, so its retry is
/// stored whole, once (issue 11 item 8).
@Suite(.serialized) struct CrossEnvironmentIngestTests {
    /// Makes the PPE (deciding) transaction fail once, as a full disk or I/O error would.
    final class FailDecisionOnce: CommitFaultInjector {
        struct Failure: Error, CustomStringConvertible { var description: String { "disk I/O error (injected)" } }
        let armed = Mutex(true)

        func reached(_ point: CommitFaultPoint) throws {
            guard point == .beforeDecisionCommit,
                armed.withLock({ a in
                    defer { a = false }
                    return a
                })
            else { return }
            throw Failure()
        }
    }

    static let body = [
        #"{"name":"AppLaunch","appId":"com.contoso.mixed","deviceId":"prod-dev","eventId":"m-prod"}"#,
        #"{"name":"AppLaunch","appId":"com.contoso.mixed","deviceId":"ppe-dev","eventId":"m-ppe","settings":{"MAMTelemetryUsePPE":true}}"#,
    ].joined(separator: "\n")

    @Test func aFailedSecondCommitIsA503AndStoresNothing() async throws {
        try await IngestHarness.run(faults: FailDecisionOnce()) { h in
            let refused = try await h.post("/v1/telemetry", Self.body)
            #expect(refused.status == .serviceUnavailable, "\(refused.body)")
            #expect(refused.headers[.retryAfter] != nil)
            #expect(refused.errorMessage.contains("retry later"), "\(refused.errorMessage)")
            #expect(try await h.everywhere("events").isEmpty, "a refused request left records behind")

            let retried = try await h.post("/v1/telemetry", Self.body)
            #expect(retried.status == .ok && retried.accepted == 2 && retried.duplicates == 0, "\(retried.body)")
            #expect(retried.json["env"] as? [String: Int] == ["prod": 1, "ppe": 1])
            #expect(try await h.records("events", env: "prod").compactMap { $0["eventId"] as? String } == ["m-prod"])
            #expect(try await h.records("events", env: "ppe").compactMap { $0["eventId"] as? String } == ["m-ppe"])
        }
    }
}
