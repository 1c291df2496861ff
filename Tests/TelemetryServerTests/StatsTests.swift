import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import StoreCore
import TelemetryModel
import TelemetryStore
import Testing

@testable import TelemetryServer

/// `/v1/stats/*` answers agree with figures computed directly from the posted events, and
/// `/metrics` carries the domain metrics for the same traffic (issue 6).
@Suite(.serialized) struct StatsTests {
    /// Fixed times (2026-11-21T10:00Z + minutes) so buckets are predictable.
    static let base: Int64 = Timestamp.parse("2026-11-21T10:00:00.000Z")!

    struct Call {
        var app: String
        var operation: String
        var code: Int
        var ms: Double
        var minute: Int
        var env: String = "prod"
    }

    static let calls: [Call] = {
        let codes = [100, 101, 100, 200, 203, 100, 216, 200, 102, 999]
        let ops = ["enroll", "policyCheckIn", "unenroll"]
        return (0..<60).map { i in
            Call(
                app: i % 4 == 0 ? "com.contoso.b" : "com.contoso.a", operation: ops[i % 3], code: codes[i % codes.count],
                ms: Double((i * 37) % 500 + 20), minute: i * 2, env: i % 10 == 9 ? "ppe" : "prod")
        }
    }()
    static let launches: [(app: String, type: String, minute: Int)] = (0..<40).map { i in
        (i % 2 == 0 ? "com.contoso.a" : "com.contoso.b", ["MDM", "MAM-WE", "Unmanaged", "MDM"][i % 4], i * 3)
    }
    static let actions: [(action: String, minute: Int)] = (0..<15).map { i in (["SelectiveWipe", "PinPrompt", "AppRestart"][i % 3], i * 7) }

    static func iso(_ minute: Int) -> String { Timestamp.format(milliseconds: base + Int64(minute) * 60_000) }

    static func body() -> [UInt8] {
        var lines: [String] = []
        for (i, c) in calls.enumerated() {
            let settings = c.env == "ppe" ? #","settings":{"MAMTelemetryUsePPE":true}"# : ""
            lines.append(
                #"{"name":"EnrollmentCall","appId":"\#(c.app)","deviceId":"d\#(i)","eventId":"e\#(i)","time":"\#(iso(c.minute))"\#(settings),"data":{"operation":"\#(c.operation)","statusCode":\#(c.code),"durationMs":\#(c.ms)}}"#
            )
        }
        for (i, l) in launches.enumerated() {
            lines.append(
                #"{"name":"AppLaunch","appId":"\#(l.app)","deviceId":"d\#(i)","eventId":"l\#(i)","time":"\#(iso(l.minute))","data":{"managementType":"\#(l.type)"}}"#
            )
        }
        for (i, a) in actions.enumerated() {
            lines.append(
                #"{"name":"IntuneAction","appId":"com.contoso.a","deviceId":"d\#(i)","eventId":"a\#(i)","time":"\#(iso(a.minute))","data":{"action":"\#(a.action)"}}"#
            )
        }
        return Array(lines.joined(separator: "\n").utf8)
    }

    static func withApp(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await withApp(clock: SystemWallClock()) { client, _ in try await test(client) }
    }

    /// The same, on `clock`, with the daemon's components at hand (to run a retention pass).
    static func withApp(
        clock: any WallClock, _ test: @escaping @Sendable (any TestClientProtocol, DaemonComponents) async throws -> Void
    ) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = ServerConfiguration()
        configuration.dataDirectory = dir
        configuration.journalMirror = false
        // These tests are about the numbers; tokens and scopes have their own matrix test.
        configuration.auth.enabled = false
        let logger = Logger(label: "stats-tests")
        let components = try DaemonComponents(
            configuration: configuration, clock: clock, metrics: PrometheusMetrics(), space: StatvfsFilesystemSpace(), logger: logger)
        let app = buildApplication(components: components, logger: logger)
        // `.router` runs the application's services, so the group committer completes appends.
        try await app.test(.router) { client in try await test(client, components) }
    }

    static func post(_ client: any TestClientProtocol) async throws {
        try await client.execute(
            uri: "/v1/telemetry", method: .post, headers: [.contentType: "application/x-ndjson"], body: ByteBuffer(bytes: body())
        ) { r in
            #expect(r.status == .ok, "\(String(buffer: r.body))")
        }
    }

    static func get(_ client: any TestClientProtocol, _ uri: String) async throws -> [String: Any] {
        try await client.execute(uri: uri, method: .get) { r in
            #expect(r.status == .ok, "\(uri): \(String(buffer: r.body))")
            return try JSONSerialization.jsonObject(with: Data(buffer: r.body)) as? [String: Any] ?? [:]
        }
    }

    static func nearestRank(_ values: [Double], _ p: Double) -> Double {
        let s = values.sorted()
        return s[max(Int((p * Double(s.count)).rounded(.up)), 1) - 1]
    }

    static let window = "since=2026-11-21T09:00:00Z&until=2026-11-21T13:00:00Z"

    @Test func enrollmentStatsMatchThePostedCalls() async throws {
        try await Self.withApp { client in
            try await Self.post(client)
            let answer = try await Self.get(client, "/v1/stats/enrollment?\(Self.window)&interval=1h")
            let prod = Self.calls.filter { $0.env == "prod" }
            let total = answer["total"] as? [String: Any] ?? [:]
            #expect(total["count"] as? Int == prod.count)
            let ok = prod.filter { EnrollmentStatus.isSuccess($0.code) }.count
            #expect(total["succeeded"] as? Int == ok)
            #expect(total["failed"] as? Int == prod.count - ok)
            #expect(abs((total["successRate"] as? Double ?? -1) - Double(ok) / Double(prod.count)) < 1e-9)
            let d = total["durationMs"] as? [String: Double] ?? [:]
            let durations = prod.map(\.ms)
            #expect(Self.roundedPercentilesMismatch(d, of: durations) == [])
            // Top failures: the most frequent failing codes, with SDK names.
            var failing: [Int: Int] = [:]
            for c in prod where !EnrollmentStatus.isSuccess(c.code) { failing[c.code, default: 0] += 1 }
            let top = total["topFailures"] as? [[String: Any]] ?? []
            #expect(top.first?["count"] as? Int == failing.values.max())
            for f in top {
                let code = f["statusCode"] as? Int ?? -1
                #expect(f["count"] as? Int == failing[code])
                #expect(f["name"] as? String == EnrollmentStatus.name(of: code))
            }
            #expect(top.contains { $0["statusCode"] as? Int == 200 && $0["name"] as? String == "AccountNotLicensed" })
            // Per operation.
            let byOp = answer["byOperation"] as? [String: [String: Any]] ?? [:]
            for op in ["enroll", "policyCheckIn", "unenroll"] {
                #expect(byOp[op]?["count"] as? Int == prod.filter { $0.operation == op }.count, "\(op)")
            }
            // Hourly buckets: 60 calls every 2 minutes span 10:00..11:58.
            let buckets = answer["buckets"] as? [[String: Any]] ?? []
            #expect(buckets.map { $0["start"] as? String } == ["2026-11-21T10:00:00.000Z", "2026-11-21T11:00:00.000Z"])
            let firstHour = prod.filter { $0.minute < 60 }.count
            #expect((buckets.first?["total"] as? [String: Any])?["count"] as? Int == firstHour)
            // App and env filters.
            let appB = try await Self.get(client, "/v1/stats/enrollment?\(Self.window)&app=com.contoso.b")
            #expect((appB["total"] as? [String: Any])?["count"] as? Int == prod.filter { $0.app == "com.contoso.b" }.count)
            let ppe = try await Self.get(client, "/v1/stats/enrollment?\(Self.window)&env=ppe")
            #expect((ppe["total"] as? [String: Any])?["count"] as? Int == Self.calls.filter { $0.env == "ppe" }.count)
            // A narrower window and 15-minute buckets.
            let narrow = try await Self.get(
                client, "/v1/stats/enrollment?since=2026-11-21T10:30:00Z&until=2026-11-21T10:59:59Z&interval=15m")
            #expect((narrow["total"] as? [String: Any])?["count"] as? Int == prod.filter { (30..<60).contains($0.minute) }.count)
            #expect((narrow["buckets"] as? [Any])?.count == 2)
        }
    }

    @Test func launchesAndActionsMatchThePostedEvents() async throws {
        try await Self.withApp { client in
            try await Self.post(client)
            let launches = try await Self.get(client, "/v1/stats/launches?\(Self.window)&interval=1h")
            var byType: [String: Int] = [:]
            for l in Self.launches { byType[l.type, default: 0] += 1 }
            #expect(launches["total"] as? Int == Self.launches.count)
            #expect(launches["counts"] as? [String: Int] == byType)
            #expect(launches["groupedBy"] as? String == "managementType")
            let buckets = launches["buckets"] as? [[String: Any]] ?? []
            #expect(buckets.map { $0["total"] as? Int ?? 0 }.reduce(0, +) == Self.launches.count)
            #expect(buckets.first?["total"] as? Int == Self.launches.filter { $0.minute < 60 }.count)
            let appA = try await Self.get(client, "/v1/stats/launches?\(Self.window)&app=com.contoso.a")
            #expect(appA["total"] as? Int == Self.launches.filter { $0.app == "com.contoso.a" }.count)

            let actions = try await Self.get(client, "/v1/stats/actions?\(Self.window)&interval=1d")
            var byAction: [String: Int] = [:]
            for a in Self.actions { byAction[a.action, default: 0] += 1 }
            #expect(actions["counts"] as? [String: Int] == byAction)
            #expect((actions["buckets"] as? [Any])?.count == 1)
        }
    }

    @Test func dropsAreCountedPerAppReasonAndHourFromTheLedger() async throws {
        try await Self.withApp { client in
            try await Self.post(client)
            try await Self.post(client)  // every record again: all duplicates
            let optedOut = #"{"name":"AppLaunch","appId":"com.contoso.c","eventId":"x1","settings":{"MAMTelemetryDisabled":true}}"#
            try await client.execute(
                uri: "/v1/telemetry", method: .post,
                body: ByteBuffer(string: "{not json\n" + #"{"name":"AppLaunch","appId":"x","eventId":"new-1"}"# + "\n" + optedOut)
            ) { r in
                #expect(r.status == .ok)
            }
            let all = try await Self.get(client, "/v1/stats/drops?since=-1h")
            let posted = Self.calls.count + Self.launches.count + Self.actions.count
            #expect((all["dropped"] as? [String: Int]) == ["duplicate": posted, "telemetryDisabled": 1], "\(all)")
            #expect((all["rejected"] as? [String: Int])?["invalid"] == 1)
            let byApp = all["droppedByApp"] as? [String: [String: Int]] ?? [:]
            let forB = Self.calls.filter { $0.app == "com.contoso.b" }.count + Self.launches.filter { $0.app == "com.contoso.b" }.count
            #expect(byApp["com.contoso.b"] == ["duplicate": forB])
            #expect(byApp["com.contoso.c"] == ["telemetryDisabled": 1])
            // One hour bucket (two if the posts straddled the top of the hour).
            #expect((1...2).contains((all["buckets"] as? [[String: Any]])?.count ?? 0))

            let onlyB = try await Self.get(client, "/v1/stats/drops?since=-1h&app=com.contoso.b")
            #expect((onlyB["dropped"] as? [String: Int]) == ["duplicate": forB], "\(onlyB)")
            #expect((onlyB["droppedByApp"] as? [String: Any])?.keys.sorted() == ["com.contoso.b"])
            // A window that ends before this hour holds none of them.
            let earlier = try await Self.get(client, "/v1/stats/drops?since=-5h&until=-2h")
            #expect((earlier["dropped"] as? [String: Int]) == [:], "\(earlier)")
        }
    }

    @Test func metricsCarryDomainCountersWithBoundedLabels() async throws {
        try await Self.withApp { client in
            try await Self.post(client)
            let text = try await client.execute(uri: "/metrics", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
                return String(buffer: r.body)
            }
            #expect(text.contains(#"mamtelemetry_app_launches_total{management_type="MAM-WE",env="prod"}"#))
            #expect(text.contains(#"status_code="200",status_name="AccountNotLicensed""#))
            #expect(text.contains(#"status_code="other",status_name="unknown""#))
            #expect(text.contains("mamtelemetry_enrollment_duration_seconds_bucket"))
            #expect(text.contains(#"mamtelemetry_intune_actions_total{action="PinPrompt",env="prod"}"#))
            #expect(text.contains(#"mamtelemetry_store_size_bytes{env="prod"}"#))
            #expect(text.contains("process_resident_memory_bytes "))
            #expect(text.contains("process_open_fds "))
            // The memory split: SQLite's connections (the store is open) hold a part of the
            // heap in use, not all of it.
            func gauge(_ name: MetricName) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name.rawValue + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
            }
            let heap = try #require(gauge(.heapInUse))
            let sqlite = try #require(gauge(.sqliteMemory))
            #expect(sqlite > 0 && sqlite < heap, "sqlite \(sqlite), heap \(heap)")
            // App ids are labels only of the drop counter and the per-app fleet series (bounded:
            // AppMetricsTests), never of the other domain families.
            let perApp: [MetricName] = [.recordsDropped, .appEnrollmentCalls, .appEnrollmentFailures, .appLaunchesByApp]
            let withApp = text.split(separator: "\n").filter { $0.contains("com.contoso") }
            #expect(withApp.allSatisfy { line in perApp.contains { line.hasPrefix($0.rawValue + "{") } }, "\(withApp)")
            #expect(withApp.contains { $0.hasPrefix(MetricName.appEnrollmentCalls.rawValue + "{") })
            // Every family has HELP and TYPE.
            let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.count
            let helps = text.split(separator: "\n").filter { $0.hasPrefix("# HELP ") }.count
            #expect(types == helps && types > 5)
        }
    }

    @Test func labelCapCollapsesUnboundedValues() {
        let cap = LabelCap(limit: 3, preset: ["MDM"])
        #expect(cap.label("MDM") == "MDM")
        #expect(cap.label("a") == "a")
        #expect(cap.label("b") == "b")
        #expect(cap.label("c") == "other")
        #expect(cap.label("a") == "a")
        #expect(cap.label("") == "other")
    }

    @Test func badParametersAreRefusedByName() async throws {
        try await Self.withApp { client in
            for (query, word) in [
                ("interval=5x", "interval"), ("interval=10s", "interval"), ("since=yesterday", "since"), ("env=staging", "env"),
                ("since=-1h&until=-2h", "since"),
            ] {
                try await client.execute(uri: "/v1/stats/enrollment?\(query)", method: .get) { r in
                    #expect(r.status == .badRequest, "\(query)")
                    #expect(String(buffer: r.body).contains(word), "\(query)")
                }
            }
        }
    }
}
