import ArgumentParser
import ClientOptions
import Foundation
import NIOHTTP1

/// `mamtelemetryctl incidents [--since -1d] [--app …] [--device …]`: which diagnostic uploads
/// came in, newest first — the answer to "which incidents came in today?".
struct IncidentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "incidents", abstract: "List diagnostic uploads (incidents), newest first.")

    @OptionGroup var server: ServerOptions
    @OptionGroup var time: TimeRangeOptions
    @Option(help: "Only this app (bundle id).") var app: String?
    @Option(help: "Only this device: any case, or its first characters when they name one device.") var device: String?
    @Option(help: "prod (default) or ppe.") var env: String?
    @Option(help: "Incidents per page (1-1000, default 50).") var limit: Int?
    @Option(help: "Continue from a previous page's cursor.") var cursor: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = DaemonClient(options: server)
        let path =
            "/v1/incidents"
            + queryString(
                time.pairs + [("app", app), ("device", device), ("env", env), ("limit", limit.map(String.init)), ("cursor", cursor)])
        let body = try await client.send(client.request(.GET, path))
        let page = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        let incidents = page["incidents"] as? [[String: Any]] ?? []
        switch output.output {
        case .json: AnswerOutput.writeVerbatim(body)
        case .ndjson: try AnswerOutput.writeNDJSON(incidents)
        case .table:
            var rows = [["ARRIVED", "INCIDENT", "APP", "DEVICE", "RECORDS", "THE USER WROTE"]]
            for i in incidents {
                rows.append([
                    i["createdAt"] as? String ?? "", i["id"] as? String ?? "", i["appId"] as? String ?? "", i["deviceId"] as? String ?? "-",
                    "\(i["records"] ?? 0)", i["description"] as? String ?? "",
                ])
            }
            print(incidents.isEmpty ? "no incidents in this window" : Table.render(rows))
            if let next = page["nextCursor"] as? String { print("more: --cursor \(next)") }
            if incidents.contains(where: { $0["descriptionWithheld"] as? Bool == true }) {
                print("what users wrote is withheld from this token: a token with the pii scope shows it")
            }
        }
    }
}
