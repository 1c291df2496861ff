import AsyncHTTPClient
import Foundation
import NIOCore
import TestSupport
import Testing

/// `/metrics` against Prometheus' own tools (issue 6): the exposition passes
/// `promtool check metrics`, the alert rules pass `promtool check rules`, and a real
/// Prometheus scraping the daemon every second returns data for every dashboard query
/// and evaluates every alert expression without error.
@Suite(.serialized) struct PrometheusTests {
    static let dashboards = DaemonProcess.packageRoot.appendingPathComponent("dashboards")
    static let dashboardFiles = ["mam-fleet.json", "collector-health.json"]

    static func tool(_ name: String) -> URL? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let url = URL(fileURLWithPath: dir).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// Runs a tool to completion (bounded), feeding `stdin`; answers status and output.
    static func run(_ tool: URL, _ arguments: [String], stdin: [UInt8] = [], timeout: TimeInterval = 60) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = tool
        p.arguments = arguments
        let input = Pipe()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("promtool-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let out = try FileHandle(forWritingTo: output)
        p.standardInput = input
        p.standardOutput = out
        p.standardError = out
        try p.run()
        input.fileHandleForWriting.write(Data(stdin))
        try input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        try out.close()
        return (p.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    /// Every PromQL expression of a dashboard, with Grafana's interval variables resolved
    /// the way Grafana would for a 1 s scrape interval, and template variables (`$env`) at
    /// their defaults unless `resolveVariables` is false.
    static func dashboardExpressions(_ file: String, resolveVariables: Bool = true) throws -> [(panel: String, expr: String)] {
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: dashboards.appendingPathComponent(file))) as? [String: Any] ?? [:]
        var out: [(String, String)] = []
        for panel in json["panels"] as? [[String: Any]] ?? [] {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                guard var expr = target["expr"] as? String else { continue }
                expr = expr.replacingOccurrences(of: "$__rate_interval", with: "30s").replacingOccurrences(of: "$__range", with: "1m")
                if resolveVariables {
                    for (name, value) in templateDefaults(json) { expr = expr.replacingOccurrences(of: "$\(name)", with: value) }
                }
                out.append((panel["title"] as? String ?? "?", expr))
            }
        }
        return out
    }

    /// The default value of each custom template variable.
    static func templateDefaults(_ dashboard: [String: Any]) -> [String: String] {
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        var out: [String: String] = [:]
        for v in variables where v["type"] as? String == "custom" {
            if let name = v["name"] as? String, let value = (v["current"] as? [String: Any])?["value"] as? String { out[name] = value }
        }
        return out
    }

    /// Metrics about the fleet's data (as opposed to the collector itself): a panel showing
    /// them must not mix PPE test data into production figures.
    static let fleetMetrics = [
        "mamtelemetry_app_launches_total", "mamtelemetry_enrollment_calls_total", "mamtelemetry_enrollment_duration_seconds",
        "mamtelemetry_intune_actions_total",
    ]

    static func alertExpressions() throws -> [(alert: String, expr: String)] {
        // The rules file is YAML; its `expr:` values are one line each (kept so on purpose).
        let text = try String(contentsOf: dashboards.appendingPathComponent("alerts.yml"), encoding: .utf8)
        var out: [(String, String)] = []
        var alert = "?"
        for line in text.split(separator: "\n") {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("- alert:") { alert = String(t.dropFirst(8)).trimmingCharacters(in: .whitespaces) }
            if t.hasPrefix("expr:") { out.append((alert, String(t.dropFirst(5)).trimmingCharacters(in: .whitespaces))) }
        }
        return out
    }

    // MARK: dashboards as files

    @Test func dashboardsAreValidJSONAndUseTheDatasourceVariable() throws {
        for file in Self.dashboardFiles {
            let json =
                try JSONSerialization.jsonObject(with: Data(contentsOf: Self.dashboards.appendingPathComponent(file))) as? [String: Any]
                ?? [:]
            #expect((json["schemaVersion"] as? Int ?? 0) >= 39, "\(file)")
            let variables = (json["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
            #expect(
                variables.contains {
                    $0["name"] as? String == "datasource" && $0["type"] as? String == "datasource" && $0["query"] as? String == "prometheus"
                }, "\(file)")
            let panels = json["panels"] as? [[String: Any]] ?? []
            #expect(panels.count >= 6, "\(file)")
            for panel in panels {
                let title = panel["title"] as? String ?? "?"
                let ds = panel["datasource"] as? [String: String]
                #expect(ds == ["type": "prometheus", "uid": "${datasource}"], "\(file): \(title)")
                let targets = panel["targets"] as? [[String: Any]] ?? []
                #expect(!targets.isEmpty, "\(file): \(title)")
                for target in targets {
                    #expect(
                        target["datasource"] as? [String: String] == ["type": "prometheus", "uid": "${datasource}"], "\(file): \(title)")
                }
            }
            // No hard-coded datasource uid anywhere.
            let text = try String(contentsOf: Self.dashboards.appendingPathComponent(file), encoding: .utf8)
            let uids = text.components(separatedBy: "\"uid\": \"").dropFirst().map { $0.prefix { $0 != "\"" } }
            #expect(uids.allSatisfy { $0 == "${datasource}" || $0 == "mam-fleet" || $0 == "mamtelemetryd-health" }, "\(file): \(uids)")
        }
    }

    /// PPE stays out of production dashboards: in the fleet dashboard every selector, and in
    /// any dashboard every selector of a fleet metric, filters `env="prod"` or `env="$env"`
    /// where `$env` is a variable offering prod and ppe only (no "All") that defaults to prod.
    @Test func fleetPanelsShowProductionUnlessPPEIsChosen() throws {
        let selector = try Regex(#"(mamtelemetry_[a-z_]+)(\{[^}]*\})?"#)
        for file in Self.dashboardFiles {
            let json =
                try JSONSerialization.jsonObject(with: Data(contentsOf: Self.dashboards.appendingPathComponent(file))) as? [String: Any]
                ?? [:]
            let variables = (json["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
            let envVariable = variables.first { $0["name"] as? String == "env" }
            for (panel, expr) in try Self.dashboardExpressions(file, resolveVariables: false) {
                for match in expr.matches(of: selector) {
                    let metric = String(expr[match.output[1].range!])
                    let isFleet = file == "mam-fleet.json" || Self.fleetMetrics.contains { metric.hasPrefix($0) }
                    guard isFleet else { continue }
                    let labels = match.output[2].range.map { String(expr[$0]) } ?? ""
                    #expect(
                        labels.contains(#"env="prod""#) || labels.contains(#"env="$env""#),
                        "\(file) / \(panel): \(metric) mixes PPE into \(expr)")
                    if labels.contains(#"env="$env""#) {
                        let env = try #require(envVariable, "\(file) uses $env but defines no env variable")
                        #expect((env["current"] as? [String: Any])?["value"] as? String == "prod", "\(file): $env must default to prod")
                        #expect(
                            env["includeAll"] as? Bool == false && env["multi"] as? Bool == false, "\(file): $env must pick one environment"
                        )
                        #expect(Set((env["query"] as? String ?? "").split(separator: ",").map(String.init)) == ["prod", "ppe"])
                    }
                }
            }
        }
    }

    // MARK: against the running daemon and a real Prometheus

    /// Telemetry that exercises every series the dashboards use: launches of several
    /// management types, enrollment successes and failures (a documented and an unknown
    /// code), actions, PPE traffic, a duplicate, an invalid line and a log record.
    static func traffic(round: Int) -> [UInt8] {
        let ppe = #","settings":{"MAMTelemetryUsePPE":true}"#
        var lines: [String] = []
        for i in 0..<6 {
            let id = "r\(round)-\(i)"
            lines.append(
                #"{"name":"AppLaunch","appId":"com.contoso.mail","eventId":"L\#(id)","data":{"managementType":"\#(["MDM", "MAM-WE", "Unmanaged"][i % 3])"}\#(i == 5 ? ppe : "")}"#
            )
            lines.append(
                #"{"name":"EnrollmentCall","appId":"com.contoso.mail","eventId":"E\#(id)","data":{"operation":"\#(["enroll", "policyCheckIn"][i % 2])","statusCode":\#([100, 200, 101, 999, 216, 100][i]),"durationMs":\#(120 + i * 300)}\#(i == 4 ? ppe : "")}"#
            )
            lines.append(
                #"{"name":"IntuneAction","appId":"com.contoso.mail","eventId":"A\#(id)","data":{"action":"\#(["PinPrompt", "SelectiveWipe"][i % 2])"}}"#
            )
        }
        // A duplicate of the round's first event.
        lines.append(#"{"name":"AppLaunch","appId":"com.contoso.mail","eventId":"Lr\#(round)-0","data":{"managementType":"MDM"}}"#)
        lines.append("{not json")
        return Array(lines.joined(separator: "\n").utf8)
    }

    @Test func promtoolAndARealPrometheusAcceptEveryQuery() async throws {
        guard let promtool = Self.tool("promtool"), let prometheusBinary = Self.tool("prometheus") else {
            Issue.record("promtool and prometheus are needed: apt-get install prometheus")
            return
        }
        let daemon = try DaemonProcess()
        try await daemon.start()
        defer { daemon.cleanUp() }

        let logLine = Array(
            #"{"appId":"com.contoso.mail","deviceId":"d1","level":"error","component":"MAMEnrollment","message":"enrollment failed"}"#.utf8)
        for round in 0..<3 {
            let (status, body, _) = try await daemon.post(
                "/v1/telemetry", body: Self.traffic(round: round), headers: [("Content-Type", "application/x-ndjson")])
            #expect(status == 200, "\(String(decoding: body, as: UTF8.self))")
        }
        _ = try await daemon.post("/v1/logs", body: logLine, headers: [("Content-Type", "application/x-ndjson")])

        // 1. The exposition passes promtool's parser and linter.
        let (metricsStatus, exposition) = try await daemon.get("/metrics")
        #expect(metricsStatus == 200)
        let (lint, lintOutput) = try Self.run(promtool, ["check", "metrics"], stdin: exposition)
        #expect(lint == 0, "promtool check metrics:\n\(lintOutput)")

        // 2. The alert rules parse.
        let (rules, rulesOutput) = try Self.run(promtool, ["check", "rules", Self.dashboards.appendingPathComponent("alerts.yml").path])
        #expect(rules == 0, "promtool check rules:\n\(rulesOutput)")

        // 3. A real Prometheus scraping the daemon every second, with the alert rules loaded.
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("prom-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let port = try DaemonProcess.freePort()
        let config = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files:
              - \(Self.dashboards.appendingPathComponent("alerts.yml").path)
            scrape_configs:
              - job_name: mamtelemetryd
                static_configs:
                  - targets: ["127.0.0.1:\(daemon.port)"]
            """
        try config.write(to: work.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
        let prometheus = Process()
        prometheus.executableURL = prometheusBinary
        prometheus.arguments = [
            "--config.file=\(work.appendingPathComponent("prometheus.yml").path)",
            "--storage.tsdb.path=\(work.appendingPathComponent("data").path)",
            "--web.listen-address=127.0.0.1:\(port)",
        ]
        let log = work.appendingPathComponent("prometheus.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        prometheus.standardOutput = logHandle
        prometheus.standardError = logHandle
        try prometheus.run()
        defer {
            if prometheus.isRunning {
                prometheus.terminate()
                prometheus.waitUntilExit()
            }
        }
        let api = "http://127.0.0.1:\(port)/api/v1/query?query="
        func query(_ expr: String) async throws -> (status: String, result: [Any], error: String?) {
            let encoded = expr.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expr
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: api + encoded), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 16 << 20)
            let json = (try? JSONSerialization.jsonObject(with: Data([UInt8](buffer: body))) as? [String: Any]) ?? [:]
            let data = json["data"] as? [String: Any] ?? [:]
            return (json["status"] as? String ?? "http \(response.status.code)", data["result"] as? [Any] ?? [], json["error"] as? String)
        }

        // Keep traffic flowing while Prometheus collects >= 15 scrapes (bounded wait).
        var round = 3
        let deadline = Date().addingTimeInterval(90)
        var scrapes = 0
        while Date() < deadline {
            _ = try await daemon.post(
                "/v1/telemetry", body: Self.traffic(round: round), headers: [("Content-Type", "application/x-ndjson")])
            round += 1
            if let r = try? await query(#"count_over_time(up{job="mamtelemetryd"}[1m])"#),
                let sample = (r.result.first as? [String: Any])?["value"] as? [Any], let v = sample.last as? String, let n = Double(v)
            {
                scrapes = Int(n)
                if scrapes >= 15 { break }
            }
            #expect(prometheus.isRunning, "prometheus exited:\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            if !prometheus.isRunning { return }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(scrapes >= 15, "Prometheus scraped only \(scrapes) times:\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        let up = try await query(#"up{job="mamtelemetryd"}"#)
        #expect(((up.result.first as? [String: Any])?["value"] as? [Any])?.last as? String == "1", "the daemon target is not up")

        // 4. Every dashboard query returns data.
        for file in Self.dashboardFiles {
            for (panel, expr) in try Self.dashboardExpressions(file) {
                let r = try await query(expr)
                #expect(r.status == "success", "\(file) / \(panel): \(expr): \(r.error ?? "")")
                #expect(!r.result.isEmpty, "\(file) / \(panel): no data for \(expr)")
            }
        }
        // 5. Every alert expression evaluates (an alert that is not firing is empty).
        let alerts = try Self.alertExpressions()
        #expect(alerts.count >= 5)
        for (alert, expr) in alerts {
            let r = try await query(expr)
            #expect(r.status == "success", "\(alert): \(expr): \(r.error ?? "")")
        }
        // And Prometheus loaded the same rules without error.
        let rulesAPI = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/rules"), timeout: .seconds(10))
        let rulesBody = String(buffer: try await rulesAPI.body.collect(upTo: 16 << 20))
        #expect(rulesBody.contains("MamTelemetryDaemonDown") && !rulesBody.contains("\"health\":\"err\""), "\(rulesBody)")
    }
}
