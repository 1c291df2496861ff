import Archive
import Foundation
import StoreCore
import TelemetryModel

/// `timeline.txt`: the story a support engineer reads first — launches (with management
/// type), enrollment calls (operation, status code name and number, duration), SDK actions
/// and warning/error logs, in device-time order, with gaps over an hour marked and the SDK's
/// rhythm spelled out (failed enrollments are retried every 24 h, enrolled apps check in for
/// policy every 8 h). Entries are kept compactly in memory up to a limit; beyond
/// it the timeline says how many were left out (the NDJSON files always hold everything).
struct Timeline {
    struct Entry {
        var time: Int64
        var seq: Int
        var lines: [String]
    }

    static let hour: Int64 = 3_600_000
    let limit: Int
    private(set) var entries: [Entry] = []
    private(set) var omitted = 0
    private var seq = 0

    init(limit: Int) { self.limit = limit }

    /// Members the redactor captures for the timeline.
    static let captureKeys: Set<String> = ["api", "result", "errorstring", "message", "appversion"]

    mutating func add(_ k: RecordKeys, kind: RecordKind, captured: [String: String]) {
        if kind == .log, (k.level ?? .info) < .warning { return }
        guard entries.count < limit else {
            omitted += 1
            return
        }
        var lines: [String] = []
        let place = "[\(k.appId)\(k.deviceId.isEmpty ? "" : " on \(k.deviceId)")]"
        switch kind {
        case .event:
            switch k.name {
            case EventName.appLaunch:
                let version = captured["appversion"].map { " \($0)" } ?? ""
                lines.append("AppLaunch       management=\(k.detail.isEmpty ? "unknown" : k.detail)\(version) \(place)")
            case EventName.enrollmentCall:
                var text = "EnrollmentCall  \(k.detail.isEmpty ? "?" : k.detail)"
                if let api = captured["api"] { text += " via \(api)" }
                let failed: Bool
                if let code = k.statusCode {
                    failed = k.succeeded.map { !$0 } ?? !EnrollmentStatus.isSuccess(code)
                    text += " -> \(EnrollmentStatus.label(of: code))"
                } else {
                    failed = k.succeeded == false
                }
                text += failed ? " FAILED" : " ok"
                if let ms = k.durationMs { text += ", \(DurationText.milliseconds(ms)) ms" }
                if let err = captured["errorstring"], !err.isEmpty { text += ", error: \(Self.clip(err))" }
                lines.append(text + " " + place)
                if failed, let code = k.statusCode, let explained = EnrollmentStatus.explanation(of: code) {
                    lines.append("    -> \(explained.name): \(explained.meaning)")
                    lines.append("    -> next step: \(explained.nextStep)")
                }
                if failed && k.detail != "policyCheckIn" {
                    lines.append(
                        "    -> failed enrollment; SDK retries in 24 h (next attempt ~\(Self.clock(k.time.saturatingAdding(24 * Self.hour))))"
                    )
                } else if failed {
                    lines.append(
                        "    -> failed policy check-in; next check-in expected ~\(Self.clock(k.time.saturatingAdding(8 * Self.hour))) (8 h)"
                    )
                } else if k.detail == "enroll" || k.detail == "policyCheckIn" {
                    lines.append("    -> next policy check-in expected ~\(Self.clock(k.time.saturatingAdding(8 * Self.hour))) (8 h)")
                }
            case EventName.intuneAction:
                let result = captured["result"].map { " result=\($0)" } ?? ""
                lines.append("IntuneAction    \(k.detail.isEmpty ? "?" : k.detail)\(result) \(place)")
            default:
                lines.append("\(k.name.isEmpty ? "event" : k.name) \(place)")
            }
        case .log:
            let level = k.level ?? .info
            guard level >= .warning else { return }
            let component = k.detail.isEmpty ? "" : "[\(k.detail)] "
            let label = level == .error ? "ERROR  " : "WARNING"
            let shared = k.incident.isEmpty ? "" : " (shared in \(k.incident))"
            lines.append("\(label)         \(component)\(Self.clip(captured["message"] ?? "")) \(place)\(shared)")
        }
        entries.append(Entry(time: k.time, seq: seq, lines: lines))
        seq += 1
    }

    /// The user's diagnostic upload as a moment of the story: when it arrived, how many records
    /// it shared and the first line of the user's description (as the caller may see it; when
    /// `withheld`, the line says how to get the words).
    mutating func addUpload(_ incident: Incident, description: String?, withheld: Bool) {
        var lines = [
            "UPLOAD          \(incident.id): the user shared \(incident.recordCount) log record\(incident.recordCount == 1 ? "" : "s") with support"
        ]
        if let first = description?.split(separator: "\n", omittingEmptySubsequences: true).first {
            lines.append(
                "    -> the user wrote: \"\(Self.clip(String(first)))\""
                    + (withheld ? " (withheld: a bundle by a token with the pii scope shows the words)" : ""))
        }
        entries.append(Entry(time: incident.createdAt, seq: seq, lines: lines))
        seq += 1
    }

    /// The finished text, written line by line into `file`.
    mutating func render(header: [String], into file: MemberFile) throws {
        entries.sort { ($0.time, $0.seq) < ($1.time, $1.seq) }
        for line in header { try file.append(line + "\n") }
        if omitted > 0 {
            try file.append(
                "NOTE: \(omitted) further entries were left out of this timeline (limit \(limit)); telemetry.ndjson and logs.ndjson hold every record.\n"
            )
        }
        try file.append("\n")
        if entries.isEmpty { try file.append("(no launches, enrollment calls, actions, warnings or errors in this window)\n") }
        var previous: Int64?
        for e in entries {
            if let previous, e.time.saturatingSubtracting(previous) > Self.hour {
                try file.append(
                    "    ... gap of \(Self.duration(e.time.saturatingSubtracting(previous))) with no launches, calls, actions, warnings or errors ...\n"
                )
            }
            previous = e.time
            let stamp = Timestamp.format(milliseconds: e.time)
            for (i, line) in e.lines.enumerated() {
                try file.append(i == 0 ? "\(stamp)  \(line)\n" : "\(String(repeating: " ", count: stamp.count))  \(line)\n")
            }
        }
    }

    /// `2026-11-21 18:15Z`: enough to plan the next expected call.
    static func clock(_ ms: Int64) -> String {
        let s = Timestamp.format(milliseconds: ms)
        let chars = Array(s)
        return String(chars[0..<10]) + " " + String(chars[11..<16]) + "Z"
    }

    static func duration(_ ms: Int64) -> String {
        let minutes = ms / 60_000
        return minutes >= 60 ? "\(minutes / 60) h \(minutes % 60) min" : "\(minutes) min"
    }

    static func clip(_ s: String) -> String {
        let oneLine = s.replacingOccurrences(of: "\n", with: " ")
        return oneLine.count > 300 ? String(oneLine.prefix(300)) + "…" : oneLine
    }
}
