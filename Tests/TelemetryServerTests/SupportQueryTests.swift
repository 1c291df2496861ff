import Foundation
import HTTPTypes
import NIOCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// The support engineer's record queries (issue 24), in process through the router: device
/// ids typed by hand resolve (case, unique prefix), an ambiguous one is refused with the
/// candidates, an unknown one answers what was searched and the nearest ids; a user's query
/// includes the logs of the devices they used; `around=` is the window ±2 min, level kept.
@Suite struct SupportQueryTests {
    static let deviceA = "4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B"
    static let deviceB = "4F0E9999-0000-4000-8000-000000000000"
    static let t0 = Timestamp.parse("2026-11-26T10:00:00Z")!

    static func at(_ offsetSeconds: Int64) -> String { Timestamp.format(milliseconds: t0 + offsetSeconds * 1000) }

    static func log(_ device: String, _ message: String, level: String = "error", at offset: Int64 = 0, identity: String? = nil) -> String {
        let who = identity.map { #","identity":"\#($0)""# } ?? ""
        return
            #"{"appId":"com.contoso.mail","deviceId":"\#(device)","level":"\#(level)","message":"\#(message)","time":"\#(at(offset))"\#(who)}"#
    }

    func get(_ h: IngestHarness, _ uri: String, token: String? = nil) async throws -> IngestHarness.Answer {
        try await h.client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token ?? h.adminToken)"]) { r in
            IngestHarness.Answer(status: r.status, headers: r.headers, body: String(buffer: r.body))
        }
    }

    @Test func deviceIdsResolveForgivingly() async throws {
        try await IngestHarness.run { h in
            let lines = [
                Self.log(Self.deviceA, "a-1"), Self.log(Self.deviceA, "a-2"), Self.log(Self.deviceB, "b-1"), Self.log("DEV-ONE", "one"),
            ]
            #expect(try await h.post("/v1/logs", lines.joined(separator: "\n")).status == .ok)

            // The whole id in lower case: the device, told as a case-insensitive match.
            let lower = try await get(h, "/v1/logs?device=\(Self.deviceA.lowercased())&order=asc").json
            #expect((lower["logs"] as? [[String: Any]])?.compactMap { $0["message"] as? String } == ["a-1", "a-2"])
            let lowerSearch = try #require((lower["search"] as? [String: Any])?["device"] as? [String: Any])
            #expect(lowerSearch["match"] as? String == "caseInsensitive" && lowerSearch["searched"] as? String == Self.deviceA)

            // A unique prefix, any case.
            let prefix = try await get(h, "/v1/events?device=4f0e2a&order=asc").json
            #expect(((prefix["search"] as? [String: Any])?["device"] as? [String: Any])?["match"] as? String == "prefix")
            let prefixLogs = try await get(h, "/v1/logs?device=4f0e2a").json
            #expect((prefixLogs["logs"] as? [Any])?.count == 2)

            // Ambiguous: a clear 400 naming both candidates.
            let ambiguous = try await get(h, "/v1/logs?device=4f0e")
            #expect(ambiguous.status == .badRequest)
            #expect((ambiguous.json["error"] as? [String: Any])?["code"] as? String == "ambiguous_device")
            #expect(ambiguous.errorMessage.contains(Self.deviceA) && ambiguous.errorMessage.contains(Self.deviceB))
            #expect(
                (ambiguous.json["candidates"] as? [[String: Any]])?.compactMap { $0["deviceId"] as? String }.sorted() == [
                    Self.deviceA, Self.deviceB,
                ])

            // Unknown: empty, and the answer says what was searched and what comes close.
            let unknown = try await get(h, "/v1/logs?device=4F0E2A1C&since=-30d").json
            #expect((unknown["logs"] as? [Any])?.isEmpty == true)
            let search = try #require(unknown["search"] as? [String: Any])
            let device = try #require(search["device"] as? [String: Any])
            #expect(device["match"] as? String == "none" && device["searched"] as? String == "4F0E2A1C")
            #expect((device["suggestions"] as? [[String: Any]])?.first?["deviceId"] as? String == Self.deviceA)
            #expect(search["kind"] as? String == "logs" && search["env"] as? String == "prod" && search["since"] is String)
            // The exact id wins over any case variant.
            let exact = try await get(h, "/v1/logs?device=DEV-ONE").json
            #expect(((exact["search"] as? [String: Any])?["device"] as? [String: Any])?["match"] as? String == "exact")
            // Bundles resolve the same way; a device without records is a 404 naming the nearest ids.
            let bundle = try await get(h, "/v1/bundles?device=\(Self.deviceA.lowercased())&since=-30d")
            #expect(bundle.status == .ok)
            #expect(bundle.headers[.contentDisposition]?.contains("device-\(Self.deviceA)") == true, "\(bundle.headers)")
            let noBundle = try await get(h, "/v1/bundles?device=4F0E2A1C")
            #expect(noBundle.status == .notFound && noBundle.errorMessage.contains("nearest ids: \(Self.deviceA)"), "\(noBundle.body)")
            #expect(try await get(h, "/v1/bundles?device=4f0e").status == .badRequest)
            // The lookup route a search box uses.
            let lookup = try await get(h, "/v1/devices?match=4f0e").json
            #expect(lookup["resolution"] as? String == "ambiguous" && (lookup["devices"] as? [Any])?.count == 2)
            let one = try await get(h, "/v1/devices?match=dev-one").json
            #expect(one["resolution"] as? String == "caseInsensitive")
            #expect((one["devices"] as? [[String: Any]])?.first?["apps"] as? [String] == ["com.contoso.mail"])
            let none = try await get(h, "/v1/devices?match=4F0E2A1C").json
            #expect(none["resolution"] as? String == "none")
            #expect((none["suggestions"] as? [[String: Any]])?.first?["deviceId"] as? String == Self.deviceA)
            #expect(try await get(h, "/v1/devices").status == .badRequest)
            // A short text is not a prefix: two letters resolve nothing.
            let short = try await get(h, "/v1/logs?device=4f").json
            #expect((short["logs"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func aUsersLogsIncludeTheDevicesTheyUsed() async throws {
        try await IngestHarness.run { h in
            let events = [
                #"{"name":"AppLaunch","appId":"com.contoso.mail","deviceId":"jane-phone","identity":"Jane@Contoso.com","time":"\#(Self.at(0))"}"#,
                #"{"name":"EnrollmentCall","appId":"com.contoso.mail","deviceId":"jane-phone","time":"\#(Self.at(5))","data":{"operation":"enroll","statusCode":200}}"#,
                #"{"name":"AppLaunch","appId":"com.contoso.mail","deviceId":"shared-ipad","identity":"bob@contoso.com","time":"\#(Self.at(9))"}"#,
            ]
            #expect(try await h.post("/v1/telemetry", events.joined(separator: "\n")).status == .ok)
            let logs = [
                Self.log("jane-phone", "license check failed", at: 6), Self.log("jane-phone", "verbose context", level: "verbose", at: 7),
                Self.log("shared-ipad", "not hers", at: 8),
            ]
            #expect(try await h.post("/v1/logs", logs.joined(separator: "\n")).status == .ok)

            let story = try await get(h, "/v1/logs?identity=jane@contoso.com&order=asc&since=\(Self.at(-3600))&until=\(Self.at(3600))").json
            #expect(
                (story["logs"] as? [[String: Any]])?.compactMap { $0["message"] as? String } == ["license check failed", "verbose context"])
            let identity = try #require((story["search"] as? [String: Any])?["identity"] as? [String: Any])
            #expect(identity["devices"] as? [String] == ["jane-phone"] && identity["expanded"] as? Bool == true)
            let eventsStory = try await get(h, "/v1/events?identity=JANE@contoso.com&order=asc").json
            #expect((eventsStory["events"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["AppLaunch", "EnrollmentCall"])

            let own = try await get(h, "/v1/logs?identity=jane@contoso.com&expand=none").json
            #expect((own["logs"] as? [Any])?.isEmpty == true)
            #expect(try await get(h, "/v1/logs?identity=jane@contoso.com&expand=all").status == .badRequest)

            // A caller without `pii` names the user by pseudonym (a UPN is refused to it) and
            // is never shown the UPN.
            let read = try await h.components.tokens.create(name: "reader", scopes: [.read], apps: [], now: 0).secret
            #expect(try await get(h, "/v1/logs?identity=jane@contoso.com", token: read).status == .forbidden)
            let pseudonym = h.components.pseudonymizer.identityPseudonym("jane@contoso.com")
            let shown = try await get(h, "/v1/events?identity=\(pseudonym)", token: read)
            #expect(shown.status == .ok)
            #expect((shown.json["events"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["EnrollmentCall", "AppLaunch"])
            let shownLogs = try await get(h, "/v1/logs?identity=\(pseudonym)&order=asc", token: read).json
            #expect((shownLogs["logs"] as? [[String: Any]])?.compactMap { $0["message"] as? String }.first == "license check failed")
            let shownStory = try #require((shownLogs["search"] as? [String: Any])?["identity"] as? [String: Any])
            #expect(shownStory["identity"] as? String == pseudonym && shownStory["devices"] as? [String] == ["jane-phone"])
            #expect(!shown.body.lowercased().contains("jane@contoso.com"), "\(shown.body)")
        }
    }

    @Test func aroundIsTheMomentPlusMinusTwoMinutesWithTheLevelKept() async throws {
        try await IngestHarness.run { h in
            let logs = [
                Self.log("dev-x", "five before", at: -300), Self.log("dev-x", "one before", level: "warning", at: -60),
                Self.log("dev-x", "info at", level: "info", at: 0), Self.log("dev-x", "error at", at: 1),
                Self.log("dev-x", "two after", level: "warning", at: 120), Self.log("dev-x", "three after", at: 180),
            ]
            #expect(try await h.post("/v1/logs", logs.joined(separator: "\n")).status == .ok)
            let page = try await get(h, "/v1/logs?device=dev-x&around=\(Self.at(0))&level=warning&order=asc").json
            #expect((page["logs"] as? [[String: Any]])?.compactMap { $0["message"] as? String } == ["one before", "error at", "two after"])
            let search = try #require(page["search"] as? [String: Any])
            #expect(search["around"] as? String == Self.at(0) && search["span"] as? String == "2m")
            #expect(search["since"] as? String == Self.at(-120) && search["until"] as? String == Self.at(120))
            let wide = try await get(h, "/v1/logs?device=dev-x&around=\(Self.at(0))&span=5m").json
            #expect((wide["logs"] as? [Any])?.count == 6)
            #expect(try await get(h, "/v1/logs?around=\(Self.at(0))&since=-1h").status == .badRequest)
            #expect(try await get(h, "/v1/logs?around=yesterday").status == .badRequest)
            #expect(try await get(h, "/v1/logs?span=2m").status == .badRequest)
        }
    }

    /// `env=` and the times mean the same on every support route: `prod` or `ppe` in any case,
    /// a time in one of the three forms; anything else a 400 naming the parameter and value.
    @Test func envAndTimesAreParsedAlikeOnEveryRoute() async throws {
        try await IngestHarness.run { h in
            #expect(try await h.post("/v1/logs", Self.log("dev-e", "one")).status == .ok)
            let routes = [
                "/v1/logs?", "/v1/events?", "/v1/incidents?", "/v1/devices?match=dev-e&", "/v1/stats/apps?", "/v1/stats/enrollment?",
                "/v1/bundles?device=dev-e&",
            ]
            for route in routes {
                let upper = try await get(h, route + "env=PROD")
                #expect(upper.status == .ok, "\(route): \(upper.body)")
                let wrong = try await get(h, route + "env=Staging")
                #expect(wrong.status == .badRequest && wrong.errorMessage.contains("'Staging'"), "\(route): \(wrong.body)")
                guard !route.hasPrefix("/v1/devices") else { continue }  // a lookup takes no window
                let time = try await get(h, route + "since=yesterday")
                #expect(
                    time.status == .badRequest && time.errorMessage.hasPrefix("since 'yesterday' is not RFC 3339"), "\(route): \(time.body)"
                )
            }
        }
    }
}
