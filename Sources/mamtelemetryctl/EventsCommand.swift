import ArgumentParser
import ClientOptions
import Foundation
import NIOHTTP1
import TelemetryModel

/// `mamtelemetryctl events`: telemetry events as a table, the daemon's JSON page, or NDJSON.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "events", abstract: "Query telemetry events.")

    @OptionGroup var server: ServerOptions
    @OptionGroup var filter: RecordFilterOptions
    @Option(help: "Event name (AppLaunch, EnrollmentCall, IntuneAction, ...).") var name: String?
    @Option(help: "Enrollment status code.") var statusCode: Int?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = DaemonClient(options: server)
        let path = "/v1/events" + queryString(filter.pairs + [("name", name), ("statusCode", statusCode.map(String.init))])
        let body = try await client.send(client.request(.GET, path))
        let page = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        let events = page["events"] as? [[String: Any]] ?? []
        switch output.output {
        case .json:
            AnswerOutput.writeVerbatim(body)
        case .ndjson:
            try AnswerOutput.writeNDJSON(events)
            // stderr: stdout stays one event per line for the next tool in the pipe.
            if let next = page["nextCursor"] as? String { FileHandle.standardError.write(Data("more: --cursor \(next)\n".utf8)) }
        case .table:
            print(Table.render(Self.rows(events)))
            if let next = page["nextCursor"] as? String { print("more: --cursor \(next)") }
            let legend = StatusLegend.lines(
                for: events.compactMap { e in
                    ((e["data"] as? [String: Any])?["statusCode"] ?? e["statusCode"]) as? Int
                })
            if !legend.isEmpty { print("\n" + legend.joined(separator: "\n")) }
            for note in SearchNotes.lines(page, kind: "events", empty: events.isEmpty) { print(note) }
        }
    }

    static func rows(_ events: [[String: Any]]) -> [[String]] {
        var rows: [[String]] = [["ID", "TIME", "ENV", "APP", "DEVICE", "NAME", "DETAIL"]]
        for e in events {
            let data = e["data"] as? [String: Any] ?? [:]
            var detail = ""
            if let code = (data["statusCode"] ?? e["statusCode"]) as? Int {
                detail = EnrollmentStatus.label(of: code)
                if let op = data["operation"] as? String { detail = "\(op) \(detail)" }
                if let ms = data["durationMs"] as? Double { detail += " \(DurationText.milliseconds(ms))ms" }
            } else if let m = data["managementType"] as? String {
                detail = m
            } else if let a = data["action"] as? String {
                detail = a
            }
            rows.append([
                "\(e["id"] ?? "")", e["time"] as? String ?? (e["receivedAt"] as? String ?? ""), e["env"] as? String ?? "",
                e["appId"] as? String ?? "", e["deviceId"] as? String ?? "", e["name"] as? String ?? "", detail,
            ])
        }
        return rows
    }
}

/// Left-aligned columns, as `journalctl`/`systemctl` list output.
enum Table {
    static func render(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        var widths = [Int](repeating: 0, count: first.count)
        for row in rows { for (i, c) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
        return rows.map { row in
            row.enumerated().map { i, c in i == row.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
