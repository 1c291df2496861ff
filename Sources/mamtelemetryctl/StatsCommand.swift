import ArgumentParser
import ClientOptions
import Foundation
import NIOHTTP1
import TelemetryModel

/// `mamtelemetryctl stats enrollment|launches|actions|drops`: the daemon's `/v1/stats/*`
/// answers as tables (one row per time bucket), the daemon's JSON, or NDJSON buckets.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Aggregates over stored telemetry (enrollment, launches, actions, drops).",
        subcommands: [Enrollment.self, Launches.self, Actions.self, Drops.self, Apps.self])

    struct Window: ParsableArguments {
        /// Without `--since` the window is the 24 h before `--until`.
        @OptionGroup var time: TimeRangeOptions
        @Option(help: "Only this app (bundle id).") var app: String?
        @Option(help: "prod or ppe (default prod).") var env: String?
        @Option(help: "Bucket width: 15m, 1h, 1d, 1w (default 1h).") var interval: String?
        @OptionGroup var output: OutputOptions

        var query: String {
            queryString(time.pairs + [("app", app), ("env", env), ("interval", interval)])
        }
    }

    /// Fetches `/v1/stats/<what>`; prints it and returns nil unless the output is a table.
    /// NDJSON is one line per time bucket (drops has no buckets: its answer is one line).
    static func fetch(_ what: String, server: ServerOptions, window: Window) async throws -> [String: Any]? {
        let client = DaemonClient(options: server)
        let body = try await client.send(client.request(.GET, "/v1/stats/\(what)" + window.query))
        switch window.output.output {
        case .json:
            AnswerOutput.writeVerbatim(body)
            return nil
        case .ndjson:
            try AnswerOutput.writeNDJSON(body, items: "buckets")
            return nil
        case .table:
            break
        }
        return try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
    }

    struct Enrollment: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enrollment calls: success rate, latency, failing status codes.")
        @OptionGroup var server: ServerOptions
        @OptionGroup var window: Window

        func run() async throws {
            guard let answer = try await StatsCommand.fetch("enrollment", server: server, window: window) else { return }
            var rows = [["BUCKET", "CALLS", "OK", "FAILED", "SUCCESS", "P50 MS", "P95 MS", "P99 MS", "TOP FAILURES"]]
            for b in answer["buckets"] as? [[String: Any]] ?? [] {
                rows.append(Self.row(StatsCommand.bucketLabel(b), b["total"] as? [String: Any] ?? [:]))
            }
            rows.append(Self.row("TOTAL", answer["total"] as? [String: Any] ?? [:]))
            print(Table.render(rows))
            let byOp = answer["byOperation"] as? [String: [String: Any]] ?? [:]
            if !byOp.isEmpty {
                print("")
                var ops = [["OPERATION", "CALLS", "OK", "FAILED", "SUCCESS", "P50 MS", "P95 MS", "P99 MS", "TOP FAILURES"]]
                for (op, s) in byOp.sorted(by: { $0.key < $1.key }) { ops.append(Self.row(op, s)) }
                print(Table.render(ops))
            }
            let total = answer["total"] as? [String: Any] ?? [:]
            let legend = StatusLegend.lines(for: (total["topFailures"] as? [[String: Any]] ?? []).compactMap { $0["statusCode"] as? Int })
            if !legend.isEmpty { print("\n" + legend.joined(separator: "\n")) }
        }

        static func row(_ label: String, _ s: [String: Any]) -> [String] {
            let d = s["durationMs"] as? [String: Double]
            let rate = (s["successRate"] as? Double).map { String(format: "%.1f%%", $0 * 100) } ?? "-"
            let failures = (s["topFailures"] as? [[String: Any]] ?? []).map { f in
                "\(EnrollmentStatus.label(of: f["statusCode"] as? Int ?? 0)) x\(f["count"] as? Int ?? 0)"
            }
            return [
                label, "\(s["count"] as? Int ?? 0)", "\(s["succeeded"] as? Int ?? 0)", "\(s["failed"] as? Int ?? 0)", rate,
                ms(d?["p50"]), ms(d?["p95"]), ms(d?["p99"]), failures.joined(separator: ", "),
            ]
        }

        static func ms(_ v: Double?) -> String { v.map { String(format: "%.0f", $0) } ?? "-" }
    }

    /// A bucket's start, marked when the window covers only part of it (the current hour
    /// still filling): its counts are not comparable with the others.
    static func bucketLabel(_ b: [String: Any]) -> String {
        (b["start"] as? String ?? "") + ((b["partial"] as? Bool) == true ? " (partial)" : "")
    }

    /// Launches and actions share a shape: counts by one dimension, per bucket.
    static func printCounts(_ answer: [String: Any], column: String) {
        let keys = (answer["counts"] as? [String: Int] ?? [:]).sorted { $0.value > $1.value }.map(\.key)
        var rows = [["BUCKET", "TOTAL"] + keys.map { $0.uppercased() }]
        for b in answer["buckets"] as? [[String: Any]] ?? [] {
            let c = b["counts"] as? [String: Int] ?? [:]
            rows.append([bucketLabel(b), "\(b["total"] as? Int ?? 0)"] + keys.map { "\(c[$0] ?? 0)" })
        }
        let total = answer["counts"] as? [String: Int] ?? [:]
        rows.append(["TOTAL", "\(answer["total"] as? Int ?? 0)"] + keys.map { "\(total[$0] ?? 0)" })
        if keys.isEmpty { print("no \(column) in this window") }
        print(Table.render(rows))
    }

    struct Launches: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "App launches by management type.")
        @OptionGroup var server: ServerOptions
        @OptionGroup var window: Window

        func run() async throws {
            guard let answer = try await StatsCommand.fetch("launches", server: server, window: window) else { return }
            StatsCommand.printCounts(answer, column: "launches")
        }
    }

    struct Actions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Intune actions by kind.")
        @OptionGroup var server: ServerOptions
        @OptionGroup var window: Window

        func run() async throws {
            guard let answer = try await StatsCommand.fetch("actions", server: server, window: window) else { return }
            StatsCommand.printCounts(answer, column: "actions")
        }
    }

    struct Drops: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Dropped and rejected records by reason, kind and app (hourly counts kept by the daemon).")
        @OptionGroup var server: ServerOptions
        @OptionGroup var window: Window

        func run() async throws {
            guard let answer = try await StatsCommand.fetch("drops", server: server, window: window) else { return }
            var rows = [["KIND", "OUTCOME", "REASON", "RECORDS"]]
            for (outcome, member) in [("dropped", "droppedByKind"), ("rejected", "rejectedByKind")] {
                for (kind, reasons) in (answer[member] as? [String: [String: Int]] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    for (reason, n) in reasons.sorted(by: { $0.key < $1.key }) { rows.append([kind, outcome, reason, "\(n)"]) }
                }
            }
            print(Table.render(rows))
            var apps = [["APP", "REASON", "DROPPED"]]
            for (app, reasons) in (answer["droppedByApp"] as? [String: [String: Int]] ?? [:]).sorted(by: { $0.key < $1.key }) {
                for (reason, n) in reasons.sorted(by: { $0.key < $1.key }) { apps.append([app.isEmpty ? "-" : app, reason, "\(n)"]) }
            }
            if apps.count > 1 { print(Table.render(apps)) }
            print("coverage: \(answer["coverage"] as? String ?? "?")")
        }
    }

    struct Apps: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Per app: enrollment calls, failure rate beside its volume, change against the period before, reach.")
        @OptionGroup var server: ServerOptions
        @OptionGroup var window: Window

        func run() async throws {
            let client = DaemonClient(options: server)
            let body = try await client.send(client.request(.GET, "/v1/stats/apps" + window.query))
            let answer = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
            let apps = answer["apps"] as? [[String: Any]] ?? []
            switch window.output.output {
            case .json: AnswerOutput.writeVerbatim(body)
            case .ndjson: try AnswerOutput.writeNDJSON(apps)
            case .table:
                var rows = [["APP", "CALLS", "FAILED", "FAILURE RATE", "BEFORE", "CHANGE", "DEVICES", "USERS", "LAUNCHES", "TOP FAILURE"]]
                var codes: [Int] = []
                for a in apps {
                    let e = a["enrollment"] as? [String: Any] ?? [:]
                    let previous = e["previous"] as? [String: Any] ?? [:]
                    let change = (e["change"] as? [String: Any])?["failureRate"] as? Double
                    let launches = a["launches"] as? [String: Any] ?? [:]
                    let top = (e["statusCodes"] as? [[String: Any]] ?? []).first { $0["success"] as? Bool == false }
                    if let code = top?["statusCode"] as? Int { codes.append(code) }
                    rows.append([
                        (a["appId"] as? String ?? "") + ((a["registered"] as? Bool) == true ? "" : " (not registered)"),
                        "\(e["calls"] ?? 0)", "\(e["failed"] ?? 0)", Self.rate(e["failureRate"], of: e["calls"]),
                        Self.rate(previous["failureRate"], of: previous["calls"]),
                        change.map { String(format: "%+.1f pt", $0 * 100) } ?? "-",
                        "\(e["devicesFailing"] ?? 0)", "\(e["usersFailing"] ?? 0)",
                        "\(launches["count"] ?? 0) (before \(launches["previous"] ?? 0))",
                        top.map { t in
                            "\(EnrollmentStatus.label(of: t["statusCode"] as? Int ?? 0)) x\(t["calls"] ?? 0) on \(t["devices"] ?? 0) device\((t["devices"] as? Int) == 1 ? "" : "s")"
                        }
                            ?? "-",
                    ])
                }
                print(Table.render(rows))
                let w = answer["previousWindow"] as? [String: Any] ?? [:]
                print("before: \(w["since"] as? String ?? "?") .. \(w["until"] as? String ?? "?") (the period of the same length)")
                let legend = StatusLegend.lines(for: codes)
                if !legend.isEmpty { print("\n" + legend.joined(separator: "\n")) }
            }
        }

        /// `12.0% of 50`: a rate never without its volume.
        static func rate(_ rate: Any?, of calls: Any?) -> String {
            guard let r = rate as? Double else { return "-" }
            return String(format: "%.1f%%", r * 100) + " of \(calls ?? 0)"
        }
    }
}
