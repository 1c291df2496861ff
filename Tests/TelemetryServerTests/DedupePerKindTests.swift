import Foundation
import Testing

@testable import TelemetryServer

/// Retries are recognised per kind, and a diagnostic upload keeps its own tagged copy of
/// records the device had already sent; the answer, the incident and the store agree on
/// what was stored (issue 11 item 5).
@Suite(.serialized) struct DedupePerKindTests {
    static let app = "com.contoso.dedupe"

    static func event(_ id: String) -> String {
        #"{"name":"AppLaunch","appId":"\#(app)","deviceId":"dev","eventId":"\#(id)","data":{"managementType":"MDM"}}"#
    }

    static func log(_ id: String, _ message: String, time: String = "2026-11-21T10:00:00.000Z") -> String {
        #"{"time":"\#(time)","level":"error","message":"\#(message)","appId":"\#(app)","deviceId":"dev","eventId":"\#(id)"}"#
    }

    @Test func anEventAndALogRecordMayShareAnEventId() async throws {
        try await IngestHarness.run { h in
            #expect(try await h.post("/v1/telemetry", Self.event("shared-1")).accepted == 1)
            let log = try await h.post("/v1/logs", Self.log("shared-1", "same id, other kind"))
            #expect(log.accepted == 1 && log.duplicates == 0, "\(log.body)")
            #expect(try await h.records("logs").compactMap { $0["message"] as? String } == ["same id, other kind"])
            // Within a kind, a retry is still a duplicate and never stored twice.
            #expect(try await h.post("/v1/logs", Self.log("shared-1", "same id, other kind")).duplicates == 1)
            #expect(try await h.post("/v1/telemetry", Self.event("shared-1")).duplicates == 1)
            #expect(try await h.records("logs").count == 1)
            #expect(try await h.records("events").count == 1)
        }
    }

    /// The device sent L1 and L2 to /v1/logs; later the user shares them (and L3, once
    /// repeated inside the upload) with support. The upload stores its own tagged copies:
    /// the incident holds everything the user shared, exactly once each.
    @Test func anUploadKeepsItsOwnCopyOfRecordsAlreadyStored() async throws {
        try await IngestHarness.run { h in
            let first = try await h.post(
                "/v1/logs",
                [Self.log("L1", "one", time: "2026-11-21T10:00:01.000Z"), Self.log("L2", "two", time: "2026-11-21T10:00:02.000Z")].joined(
                    separator: "\n"))
            #expect(first.accepted == 2)
            let logs = [
                Self.log("L1", "one", time: "2026-11-21T10:00:01.000Z"), Self.log("L2", "two", time: "2026-11-21T10:00:02.000Z"),
                Self.log("L3", "three", time: "2026-11-21T10:00:03.000Z"), Self.log("L3", "three", time: "2026-11-21T10:00:03.000Z"),
            ]
            let upload = try await h.post(
                "/v1/diagnostics",
                #"{"appId":"\#(Self.app)","deviceId":"dev","description":"shared","logs":[\#(logs.joined(separator: ","))]}"#,
                contentType: "application/json")
            #expect(upload.status == .created, "\(upload.body)")
            #expect(upload.accepted == 3 && upload.duplicates == 1, "\(upload.body)")
            let id = try #require((upload.json["incident"] as? [String: Any])?["id"] as? String)

            let tagged = try await h.records("logs", "incident=\(id)")
            #expect(tagged.compactMap { $0["eventId"] as? String } == ["L1", "L2", "L3"])
            #expect(tagged.allSatisfy { $0["incident"] as? String == id })
            let view = try await h.get("/v1/incidents/\(id)")
            #expect(view["records"] as? Int == 3)
            #expect(view["firstTime"] as? String == "2026-11-21T10:00:01.000Z")
            #expect(view["lastTime"] as? String == "2026-11-21T10:00:03.000Z")
            let stored = try #require(try await h.components.store.incident(id: id))
            #expect(stored.recordCount == 3, "the incident must count what was stored")
            // The device's own copies are still there, untagged, beside the upload's.
            let all = try await h.records("logs")
            #expect(all.count == 5)
            #expect(all.filter { $0["incident"] == nil }.compactMap { $0["eventId"] as? String } == ["L1", "L2"])
            // A device retrying /v1/logs afterwards is still recognised as a retry.
            #expect(try await h.post("/v1/logs", Self.log("L2", "two")).duplicates == 1)
        }
    }
}
