import ArgumentParser
import AsyncHTTPClient
import ClientOptions
import Foundation
import NIOCore
import NIOHTTP1
import TelemetryModel

/// `mamtelemetryctl logs [--incident ID] [--around TIME] [-f [-n N]]`: diagnostic logs, a page
/// or followed live like `journalctl -f` (the last 10 first, then records as they arrive,
/// late ones marked), with levels coloured on a terminal (not with `NO_COLOR`).
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logs", abstract: "Query or follow diagnostic logs.")

    @OptionGroup var server: ServerOptions
    @OptionGroup var filter: RecordFilterOptions
    @Option(help: "Minimum level: verbose, info, warning, error.") var level: String?
    @Option(help: "Incident id (MAM-XXXX-XXXX).") var incident: String?
    @Flag(name: [.short, .long], help: "Keep printing new records as they arrive (arrival order; late ones are marked).")
    var follow = false
    @Option(name: [.customShort("n"), .long], help: "With --follow: start with the last N records (default 10).") var lines: Int?
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if follow && output.output == .json {
            throw ValidationError("--follow streams one record at a time: use --output ndjson or table")
        }
        if lines != nil && !follow { throw ValidationError("-n/--lines chooses where --follow starts; use --limit for a page") }
        if let lines, !(0...1000).contains(lines) { throw ValidationError("-n/--lines must be from 0 to 1000") }
    }

    func run() async throws {
        let client = DaemonClient(options: server)
        var pairs = filter.pairs + [("level", level), ("incident", incident)]
        if follow {
            pairs += [("follow", "true"), ("tail", String(lines ?? 10))]
            if let device = filter.device { try await DeviceNote.announce(device, env: filter.env, app: filter.app, client: client) }
            try await stream("/v1/logs" + queryString(pairs), client: client)
            return
        }
        let path = "/v1/logs" + queryString(pairs)
        if output.output == .ndjson {
            try await stream(path, client: client)
            return
        }
        let body = try await client.send(client.request(.GET, path))
        if output.output == .json {
            AnswerOutput.writeVerbatim(body)
            return
        }
        let page = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        let records = page["logs"] as? [[String: Any]] ?? []
        let colour = Terminal.colour()
        // A page comes newest first; a table prints it in reading order, like journalctl.
        let readingOrder = filter.order == "asc" ? records : records.reversed()
        for r in readingOrder { print(LogLine.format(r, colour: colour)) }
        if let next = page["nextCursor"] as? String { print("more: --cursor \(next)") }
        for note in SearchNotes.lines(page, kind: "log records", empty: records.isEmpty) { print(note) }
    }

    /// NDJSON from the daemon, line by line as it arrives: verbatim for `--output ndjson`,
    /// else as terminal lines (a follow prints each at once).
    func stream(_ path: String, client: DaemonClient) async throws {
        let request = client.request(.GET, path, accept: "application/x-ndjson")
        let response = try await HTTPClient.shared.execute(request, timeout: .hours(24 * 365))
        guard response.status.code == 200 else {
            let body = try await response.body.collect(upTo: 1 << 20)
            throw DaemonClient.Failure(status: Int(response.status.code), message: DaemonClient.errorMessage([UInt8](buffer: body)))
        }
        let colour = Terminal.colour()
        var pending: [UInt8] = []
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
                if output.output == .ndjson {
                    print(String(decoding: line, as: UTF8.self))
                } else if let r = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] {
                    print(LogLine.format(r, colour: colour))
                } else {
                    print(String(decoding: line, as: UTF8.self))
                }
                if follow { fflush(nil) }
            }
        }
    }
}

/// One log record as a terminal line: `time level [component] app/device: message`, and on a
/// follow `[arrived 20 min late]` when it reached the daemon a minute or more after its device time.
enum LogLine {
    /// Below this a delay is upload batching, not worth a mark.
    static let lateAfterMs: Int64 = 60_000

    static func format(_ r: [String: Any], colour: Bool) -> String {
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
        var line = "\(time) \(name) \(who)\(incident) \(component)\(r["message"] as? String ?? "")"
        if let delay = arrivalDelay(r), delay >= lateAfterMs {
            let late = "[arrived \(spoken(delay)) late]"
            line += " " + (colour ? "\u{1B}[35m\(late)\u{1B}[0m" : late)
        }
        return line
    }

    /// How late a followed record arrived (`arrivalDelayMs`, set on streams only: a page is
    /// read in device time, where lateness changes nothing). A record of a diagnostic upload
    /// is old on purpose — the user shared past logs — so it is not marked.
    static func arrivalDelay(_ r: [String: Any]) -> Int64? {
        guard r["incident"] == nil else { return nil }
        return (r["arrivalDelayMs"] as? NSNumber)?.int64Value
    }

    /// `20 min`, `3 h 5 min`, `2 d 4 h`.
    static func spoken(_ ms: Int64) -> String {
        let minutes = ms / 60_000
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 48 * 60 { return "\(minutes / 60) h \(minutes % 60) min" }
        return "\(minutes / 1440) d \(minutes % 1440 / 60) h"
    }
}

/// Before following a device, says which device the typed id names (the daemon resolves it
/// the same way), so a prefix or a lower-cased id is not followed in silence.
enum DeviceNote {
    static func announce(_ device: String, env: String?, app: String?, client: DaemonClient) async throws {
        let body = try await client.send(
            client.request(.GET, "/v1/devices" + queryString([("match", device), ("env", env), ("app", app)])))
        let answer = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        let devices = (answer["devices"] as? [[String: Any]] ?? []).compactMap { $0["deviceId"] as? String }
        let note: String
        switch answer["resolution"] as? String {
        case "caseInsensitive", "prefix": note = "following device \(devices.first ?? device) (matched '\(device)')"
        case "none":
            let near = (answer["suggestions"] as? [[String: Any]] ?? []).compactMap { $0["deviceId"] as? String }
            note =
                "no records of device '\(device)' yet; following it as typed"
                + (near.isEmpty ? "" : " (nearest ids: \(near.joined(separator: ", ")))")
        default: return
        }
        FileHandle.standardError.write(Data((note + "\n").utf8))
    }
}
