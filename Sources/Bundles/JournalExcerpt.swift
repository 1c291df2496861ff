import Foundation
import TelemetryModel

/// The daemon's own journal lines for the bundle window (`journalctl -t mamtelemetryd`),
/// scrubbed like every other text. When there is no journalctl, or it fails (no journal in
/// a container, no permission), the file is left out and the manifest says why.
enum JournalExcerpt {
    static let candidates = ["/usr/bin/journalctl", "/bin/journalctl"]

    /// Writes the scrubbed lines into `file`; returns nil on success or the reason it could not.
    static func collect(since: Int64, until: Int64, into file: MemberFile, scratch: URL, redactor: inout RecordRedactor) -> String? {
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
        process.arguments = [
            "-t", "mamtelemetryd", "--no-pager", "-q", "-o", "short-iso",
            "--since", "@\(since / 1000)", "--until", "@\((until + 999) / 1000)",
        ]
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
            while let chunk = try input.read(upToCount: 1 << 16), !chunk.isEmpty {
                pending.append(contentsOf: chunk)
                while let nl = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<nl], as: UTF8.self)
                    pending.removeSubrange(...nl)
                    try file.append(redactor.scrub(text: line) + "\n")
                }
            }
            if !pending.isEmpty { try file.append(redactor.scrub(text: String(decoding: pending, as: UTF8.self)) + "\n") }
        } catch {
            return "journalctl output unreadable: \(error)"
        }
        return nil
    }
}
