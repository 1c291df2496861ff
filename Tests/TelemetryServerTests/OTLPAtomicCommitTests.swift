import Foundation
import HTTPTypes
import StoreCore
import Synchronization
import TelemetryStore
import Testing

@testable import TelemetryServer

/// An OTLP export whose records map to log records and telemetry events is stored in one
/// commit: when the store fails between the two kinds the exporter gets 503 with
/// Retry-After and neither kind is stored, so its resend is stored whole, once.
@Suite(.serialized) struct OTLPAtomicCommitTests {
    /// Fails the commit once at `point`, as an I/O error there would.
    final class FailOnce: CommitFaultInjector {
        struct Failure: Error, CustomStringConvertible { var description: String { "disk I/O error (injected)" } }
        let point: CommitFaultPoint
        let armed = Mutex(true)

        init(at point: CommitFaultPoint) { self.point = point }

        func reached(_ point: CommitFaultPoint) throws {
            guard point == self.point,
                armed.withLock({ a in
                    defer { a = false }
                    return a
                })
            else { return }
            throw Failure()
        }

        var fired: Bool { !armed.withLock { $0 } }
    }

    static func attribute(_ key: String, _ value: String) -> String {
        #"{"key":"\#(key)","value":{"stringValue":"\#(value)"}}"#
    }

    /// One resource's records: a log record and an AppLaunch event, each with a
    /// `log.record.uid` so a resend is recognised, in PPE when `ppe` (`mam.use_ppe`).
    static func resource(device: String, ppe: Bool) -> String {
        let flags = ppe ? "," + attribute("mam.use_ppe", "true") : ""
        let log =
            #"{"timeUnixNano":"1795256130123000000","severityNumber":17,"body":{"stringValue":"enrollment failed"},"attributes":[\#(attribute("log.record.uid", device + "-log"))\#(flags)]}"#
        let event =
            #"{"timeUnixNano":"1795256130124000000","eventName":"AppLaunch","attributes":[\#(attribute("log.record.uid", device + "-event")),\#(attribute("managementType", "MDM"))\#(flags)]}"#
        return
            #"{"resource":{"attributes":[\#(attribute("service.name", "com.contoso.atomic")),\#(attribute("device.id", device))]},"scopeLogs":[{"logRecords":[\#(log),\#(event)]}]}"#
    }

    /// An export with a prod resource, and a PPE one when `withPPE` (then the request spans
    /// both environments: prod is staged, PPE decides).
    static func export(withPPE: Bool) -> String {
        let resources = [resource(device: "dev-prod", ppe: false)] + (withPPE ? [resource(device: "dev-ppe", ppe: true)] : [])
        return #"{"resourceLogs":["# + resources.joined(separator: ",") + "]}"
    }

    /// [log records, events] stored for the test app, in every environment.
    static func stored(_ h: IngestHarness) async throws -> [Int] {
        [try await h.everywhere("logs", "app=com.contoso.atomic").count, try await h.everywhere("events", "app=com.contoso.atomic").count]
    }

    @Test(arguments: [(CommitFaultPoint.betweenKinds, false), (.beforeDecisionCommit, true)])
    func aFailedCommitStoresNeitherKindAndTheResendIsStoredWhole(point: CommitFaultPoint, ppe: Bool) async throws {
        let faults = FailOnce(at: point)
        try await IngestHarness.run(faults: faults) { h in
            let mixed = Self.export(withPPE: ppe)
            let refused = try await h.post("/v1/logs", mixed, contentType: "application/json")
            #expect(faults.fired, "the fault point \(point) was not reached")
            #expect(refused.status == .serviceUnavailable, "\(refused.body)")
            #expect(refused.headers[.retryAfter] != nil)
            #expect(try await Self.stored(h) == [0, 0], "a refused export left records behind")

            let resent = try await h.post("/v1/logs", mixed, contentType: "application/json")
            #expect(resent.status == .ok, "\(resent.body)")
            let expected = ppe ? 2 : 1
            #expect(try await Self.stored(h) == [expected, expected])
            // A second resend is recognised whole: nothing is stored twice.
            _ = try await h.post("/v1/logs", mixed, contentType: "application/json")
            #expect(try await Self.stored(h) == [expected, expected])
        }
    }
}
