import Archive
import Foundation
import Privacy
import TelemetryModel

/// `journal.txt`: the journal lines about what the bundle is for (`JournalScope`) in its
/// window, redacted like every other file (`RecordRedactor.journalMessage`), one
/// `journalctl -o short-iso`-like line each. The daemon reads the journal with journalctl;
/// under the shipped unit that works because the service is in group `systemd-journal`
/// (`SupplementaryGroups=`). When there is no journalctl, or it fails (no journal in a
/// container, no permission), the file is left out and the manifest says why.
enum JournalExcerpt {
    static let candidates = ["/usr/bin/journalctl", "/bin/journalctl"]

    /// Writes the admitted, redacted lines into `file`; returns nil on success or the reason it could not.
    static func collect(
        scope: JournalScope, since: Int64, until: Int64, into file: MemberFile, scratch: URL, redactor: inout RecordRedactor
    ) -> String? {
        guard let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return "journalctl not found on this host"
        }
        let raw = scratch.appendingPathComponent("journal-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: raw) }
        guard FileManager.default.createFile(atPath: raw.path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let out = try? FileHandle(forWritingTo: raw)
        else { return "cannot create a scratch file for journalctl output" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments =
            [
                "-t", JournalScope.daemonLogger, "--no-pager", "-q", "-o", "json",
                "--since", "@\(since / 1000)", "--until", "@\(until.saturatingAdding(999) / 1000)",
            ] + scope.journalctlMatches
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return "journalctl could not be started: \(error)"
        }
        process.waitUntilExit()
        try? out.close()
        guard process.terminationStatus == 0 else {
            return "journalctl exited with status \(process.terminationStatus) (no journal reachable)"
        }
        guard let input = try? FileHandle(forReadingFrom: raw) else { return "journalctl output unreadable" }
        defer { try? input.close() }
        var pending: [UInt8] = []
        do {
            func emit(_ line: ArraySlice<UInt8>) throws {
                guard let entry = entry(line), scope.admits(entry) else { return }
                try file.append(render(entry, redactor: &redactor) + "\n")
            }
            while let chunk = try input.read(upToCount: 1 << 16), !chunk.isEmpty {
                pending.append(contentsOf: chunk)
                while let nl = pending.firstIndex(of: 0x0A) {
                    try emit(pending[..<nl])
                    pending.removeSubrange(...nl)
                }
            }
            if !pending.isEmpty { try emit(pending[...]) }
        } catch {
            return "journalctl output unreadable: \(error)"
        }
        return nil
    }

    /// One entry of `journalctl -o json`: every field as text. journalctl writes a value
    /// that is not printable UTF-8 (a multi-line message, say) as an array of bytes.
    static func entry(_ line: ArraySlice<UInt8>) -> [String: String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { return nil }
        return object.compactMapValues { value in
            if let text = value as? String { return text }
            if let bytes = value as? [Int] { return String(decoding: bytes.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self) }
            return nil
        }
    }

    /// `2026-11-21T10:15:30.123Z mamtelemetryd[812]: message`, the message redacted: a
    /// mirrored verbose record's text is withheld, anything else has e-mails and tokens
    /// pseudonymized.
    static func render(_ entry: [String: String], redactor: inout RecordRedactor) -> String {
        let stamp = entry["__REALTIME_TIMESTAMP"].flatMap(Int64.init).map { Timestamp.format(milliseconds: $0 / 1000) } ?? "-"
        let identifier = entry["SYSLOG_IDENTIFIER"] ?? JournalScope.daemonLogger
        let pid = entry["_PID"].map { "[\($0)]" } ?? ""
        let mirroredVerbose = entry[JournalScope.ownLineField] == nil && entry["MAM_LEVEL"] == LogLevel.verbose.name
        let message = redactor.journalMessage(entry["MESSAGE"] ?? "", verbose: mirroredVerbose)
        return "\(stamp) \(identifier)\(pid): \(message)"
    }
}
