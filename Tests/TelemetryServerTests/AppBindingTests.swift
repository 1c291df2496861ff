import Foundation
import HTTPTypes
import Testing

@testable import TelemetryServer

/// An ingest token bound to an app stores records of that app only, on every ingest route,
/// whatever the body shape or wherever the app id comes from (issue 11 item 3). Each probe
/// tries to get a record of another app stored; afterwards no such record exists anywhere.
@Suite(.serialized) struct AppBindingTests {
    static let allowed = "com.contoso.allowed"
    static let other = "com.contoso.other"

    static func event(_ app: String, _ id: String) -> String {
        #"{"name":"AppLaunch","appId":"\#(app)","deviceId":"dev-\#(id)","eventId":"\#(id)","data":{"managementType":"MDM"}}"#
    }

    static func log(_ app: String?, _ message: String) -> String {
        app.map { #"{"level":"error","message":"\#(message)","appId":"\#($0)","deviceId":"dev"}"# }
            ?? #"{"level":"error","message":"\#(message)","deviceId":"dev"}"#
    }

    static func upload(app: String, logs: [String], text: String? = nil) -> String {
        var members = [
            #""appId":"\#(app)""#, #""deviceId":"dev""#, #""description":"binding probe""#, #""logs":[\#(logs.joined(separator: ","))]"#,
        ]
        if let text { members.append(#""text":"\#(text)""#) }
        return "{" + members.joined(separator: ",") + "}"
    }

    @Test func aBoundTokenStoresOnlyItsOwnAppsRecordsOnEveryRoute() async throws {
        try await IngestHarness.run { h in
            let token = try await h.ingestToken(boundTo: [Self.allowed])
            var probes: [(String, IngestHarness.Answer)] = []
            func probe(_ name: String, _ answer: IngestHarness.Answer) { probes.append((name, answer)) }

            // Telemetry: NDJSON, a JSON array, one other-app line among allowed ones.
            probe("ndjson other", try await h.post("/v1/telemetry", Self.event(Self.other, "t1"), token: token))
            probe(
                "array other",
                try await h.post("/v1/telemetry", "[\(Self.event(Self.other, "t2"))]", token: token, contentType: "application/json"))
            let mixed = try await h.post(
                "/v1/telemetry", [Self.event(Self.allowed, "t3"), Self.event(Self.other, "t4")].joined(separator: "\n"), token: token)
            #expect(mixed.status == .ok && mixed.accepted == 1 && mixed.rejectedLines == [2], "\(mixed.body)")
            // The collector-style header authenticates the same token and is bound the same way.
            probe(
                "X-APIKey", try await h.post("/v1/telemetry", Self.event(Self.other, "t5"), headers: [HTTPField.Name("X-APIKey")!: token]))
            // Spellings of the allowed id that are other ids: case, whitespace, Unicode tricks.
            for (i, spelling) in [
                "COM.CONTOSO.ALLOWED", "com.contoso.Allowed", "com.contoso.allowed ", " com.contoso.allowed", "com.contoso.allowed\u{200B}",
            ].enumerated() {
                probe("spelling \(i)", try await h.post("/v1/telemetry", Self.event(spelling, "s\(i)"), token: token))
            }

            // Logs: the record's own appId, ?app=, the header, text lines for another app.
            probe("logs record", try await h.post("/v1/logs", Self.log(Self.other, "l1"), token: token))
            probe("logs ?app", try await h.post("/v1/logs?app=\(Self.other)", Self.log(nil, "l2"), token: token))
            probe(
                "logs header",
                try await h.post("/v1/logs", Self.log(nil, "l3"), token: token, headers: [HTTPField.Name("X-MAM-App-Id")!: Self.other]))
            probe(
                "text ?app",
                try await h.post(
                    "/v1/logs?app=\(Self.other)", "2026-11-21T10:00:00Z [ERROR] l4\nl5", token: token, contentType: "text/plain"))
            probe(
                "text header",
                try await h.post(
                    "/v1/logs", "l6", token: token, headers: [HTTPField.Name("X-MAM-App-Id")!: Self.other], contentType: "text/plain"))
            // An allowed default does not let a record name another app itself.
            let overridden = try await h.post(
                "/v1/logs?app=\(Self.allowed)", [Self.log(nil, "ok1"), Self.log(Self.other, "l7")].joined(separator: "\n"), token: token)
            #expect(overridden.status == .ok && overridden.accepted == 1 && overridden.rejectedLines == [2], "\(overridden.body)")

            // Diagnostics: an upload for another app, and an allowed upload carrying another
            // app's records inside (the reported bypass).
            probe(
                "upload other",
                try await h.post(
                    "/v1/diagnostics", Self.upload(app: Self.other, logs: [Self.log(nil, "d1")]), token: token,
                    contentType: "application/json"))
            probe(
                "upload inner only",
                try await h.post(
                    "/v1/diagnostics", Self.upload(app: Self.allowed, logs: [Self.log(Self.other, "d2")]), token: token,
                    contentType: "application/json"))
            let inner = try await h.post(
                "/v1/diagnostics",
                Self.upload(
                    app: Self.allowed, logs: [Self.log(nil, "ok2"), Self.log(Self.other, "d3")], text: "2026-11-21T10:00:00Z [INFO] ok3"),
                token: token, contentType: "application/json")
            #expect(inner.status == .created && inner.accepted == 2 && inner.rejectedLines == [2], "\(inner.body)")

            for (name, answer) in probes {
                #expect(answer.status == .forbidden, "\(name): \(answer.status) \(answer.body)")
                #expect(answer.errorMessage.contains(Self.allowed), "\(name): \(answer.errorMessage)")
            }
            // Nothing of any other app was stored, in any environment, by any route.
            let events = try await h.everywhere("events")
            let logs = try await h.everywhere("logs")
            #expect(events.compactMap { $0["appId"] as? String } == [Self.allowed], "\(events)")
            #expect(Set(logs.compactMap { $0["appId"] as? String }) == [Self.allowed], "\(logs)")
            #expect(Set(logs.compactMap { $0["message"] as? String }) == ["ok1", "ok2", "ok3"])
            // The incident counts only what the binding let through.
            let id = try #require((inner.json["incident"] as? [String: Any])?["id"] as? String)
            #expect(try await h.get("/v1/incidents/\(id)")["records"] as? Int == 2)
            #expect(try await h.components.store.incident(id: id)?.recordCount == 2)
        }
    }

    /// Binding compares ids byte for byte: a Unicode-equivalent spelling (Swift's `==` calls
    /// "é" and "e\u{301}" equal) is another app id in storage and queries, so it is refused.
    @Test func unicodeEquivalentIdsAreOtherApps() async throws {
        try await IngestHarness.run { h in
            let token = try await h.ingestToken(boundTo: ["com.contoso.caf\u{E9}"])
            let decomposed = try await h.post("/v1/telemetry", Self.event("com.contoso.cafe\u{301}", "u1"), token: token)
            #expect(decomposed.status == .forbidden, "\(decomposed.body)")
            let exact = try await h.post("/v1/telemetry", Self.event("com.contoso.caf\u{E9}", "u2"), token: token)
            #expect(exact.status == .ok && exact.accepted == 1, "\(exact.body)")
            #expect(try await h.everywhere("events").count == 1)
        }
    }

    @Test func unboundAndAdminTokensPostForAnyApp() async throws {
        try await IngestHarness.run { h in
            let unbound = try await h.ingestToken(boundTo: [])
            #expect(try await h.post("/v1/telemetry", Self.event(Self.other, "a1"), token: unbound).accepted == 1)
            #expect(try await h.post("/v1/telemetry", Self.event("com.any.app", "a2")).accepted == 1)
            let upload = try await h.post(
                "/v1/diagnostics", Self.upload(app: Self.other, logs: [Self.log(nil, "x")]), contentType: "application/json")
            #expect(upload.status == .created)
        }
    }
}
