import ArgumentParser
import AsyncHTTPClient
import Foundation
import TelemetryModel

/// `mamtelemetryctl logs [--incident ID] [-f]`: diagnostic logs, newest page or followed
/// live like `journalctl -f`, with levels coloured on a terminal (not with `NO_COLOR`).
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logs", abstract: "Query or follow diagnostic logs.")

    @OptionGroup var server: ServerOptions
    @OptionGroup var filter: RecordFilterOptions
    @Option(help: "Minimum level: verbose, info, warning, error.") var level: String?
    @Option(help: "Incident id (MAM-XXXX-XXXX).") var incident: String?
    @Flag(name: [.short, .long], help: "Keep printing new records as they arrive.") var follow = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if follow && output.output == .json {
            throw ValidationError("--follow streams one record at a time: use --output ndjson or table")
        }
    }

    func run() async throws {
        let client = DaemonClient(options: server)
        var pairs = filter.pairs + [("level", level), ("incident", incident)]
        if follow { pairs.append(("follow", "true")) }
        let path = "/v1/logs" + queryString(pairs)
        if output.output == .json {
            AnswerOutput.writeVerbatim(try await client.send(client.request(.GET, path)))
            return
        }
        let request = client.request(.GET, path, accept: "application/x-ndjson")
        let response = try await HTTPClient.shared.execute(request, timeout: .hours(24 * 365))
        guard response.status.code == 200 else {
            let body = try await response.body.collect(upTo: 1 << 20)
            throw DaemonClient.Failure(status: Int(response.status.code), message: DaemonClient.errorMessage([UInt8](buffer: body)))
        }
        let colour = Terminal.colour()
        var pending: [UInt8] = []
        var printed: [String] = []
        for try await chunk in response.body {
            pending.append(contentsOf: chunk.readableBytesView)
            while let nl = pending.firstIndex(of: 0x0A) {
                let line = Array(pending[..<nl])
                pending.removeSubrange(...nl)
                guard !line.isEmpty else { continue }  // follow heartbeat
                // A followed stream's last line says why the daemon ended it (its token was revoked).
                if follow, line.starts(with: Array(#"{"error":"#.utf8)) {
                    throw DaemonClient.Failure(status: 200, message: "the stream ended: " + DaemonClient.errorMessage(line))
                }
                let text = output.output == .ndjson ? String(decoding: line, as: UTF8.self) : LogLine.format(line, colour: colour)
                if follow {
                    print(text)
                    fflush(nil)
                } else {
                    printed.append(text)
                }
            }
        }
        // A page comes newest first; a table prints it in reading order, like journalctl.
        // NDJSON keeps the daemon's order, as `--output json` does.
        let readingOrder = output.output == .table && filter.order != "asc"
        for line in readingOrder ? printed.reversed() : printed { print(line) }
    }
}

/// One log record as a terminal line: `time level [component] app/device: message`.
enum LogLine {
    static func format(_ json: [UInt8], colour: Bool) -> String {
        guard let r = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            return String(decoding: json, as: UTF8.self)
        }
        let level = (r["level"] as? String).flatMap(LogLevel.init(name:)) ?? .info
        var name = level.name.uppercased().padding(toLength: 7, withPad: " ", startingAt: 0)
        if colour {
            let code: String
            switch level {
            case .error: code = "31;1"
            case .warning: code = "33;1"
            case .info: code = "0"
            case .verbose: code = "2"
            }
            name = "\u{1B}[\(code)m\(name)\u{1B}[0m"
        }
        let time = r["time"] as? String ?? (r["receivedAt"] as? String ?? "")
        let component = (r["component"] as? String).map { "[\($0)] " } ?? ""
        let who = "\(r["appId"] as? String ?? "")/\(r["deviceId"] as? String ?? "-")"
        let incident = (r["incident"] as? String).map { " {\($0)}" } ?? ""
        return "\(time) \(name) \(who)\(incident) \(component)\(r["message"] as? String ?? "")"
    }
}
