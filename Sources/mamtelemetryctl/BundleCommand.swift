import Archive
import ArgumentParser
import AsyncHTTPClient
import ClientOptions
import Foundation
import NIOCore
import NIOHTTP1
import TelemetryModel

/// `mamtelemetryctl bundle --incident MAM-… [-o FILE]` and `mamtelemetryctl bundle verify FILE`:
/// the support engineer's one command. The archive is streamed to disk as it
/// arrives and then re-read against its manifest, so what the engineer attaches to a case
/// is known to be exactly what the daemon produced.
struct BundleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle", abstract: "Download and verify a diagnostic bundle (incident, device, identity, app or session).",
        subcommands: [Download.self, Verify.self], defaultSubcommand: Download.self)

    /// `bundle [download] --incident …`: the default subcommand, so the short form works.
    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "download", abstract: "Download a bundle, verify its checksums and print a summary.")

        @OptionGroup var server: ServerOptions
        @Option(help: "Incident id a user quoted (MAM-XXXX-XXXX).") var incident: String?
        @Option(help: "Device id.") var device: String?
        @Option(help: "User: a user-… pseudonym, or with a pii token a UPN (any case); either adds its devices' logs in the window.")
        var identity: String?
        @Flag(help: "With --identity: only the records that name the identity, not its devices' other records.")
        var noDevices = false
        @Option(help: "App bundle id.") var app: String?
        @Option(help: "Session id.") var session: String?
        /// Without `--since`/`--until` the window is the incident's, else the last 24 h.
        @OptionGroup var time: TimeRangeOptions
        @Option(help: "prod or ppe (default: the incident's environment, else prod).") var env: String?
        @Option(help: "zip or tar.gz.") var format: String = "zip"
        @Option(name: [.short, .customLong("output")], help: "Archive file to write (default mam-bundle-<scope>-<timestamp>.<ext>).")
        var output: String?

        func validate() throws {
            guard [incident, device, identity, app, session].contains(where: { !($0 ?? "").isEmpty }) else {
                throw ValidationError("a bundle needs at least one scope: --incident, --device, --identity, --app or --session")
            }
            if let env, TelemetryEnvironment(rawValue: env.lowercased()) == nil { throw ValidationError("--env must be prod or ppe") }
            guard Self.format(format) != nil else { throw ValidationError("--format must be zip or tar.gz") }
        }

        static func format(_ raw: String) -> ArchiveFormat? { ArchiveFormat(rawValue: raw == "tgz" ? "tar.gz" : raw) }

        func run() async throws {
            let format = Self.format(format)!
            let client = DaemonClient(options: server)
            let path =
                "/v1/bundles"
                + queryString(
                    [
                        ("incident", incident), ("device", device), ("identity", identity), ("app", app), ("session", session),
                    ] + time.pairs + [("env", env), ("format", format.rawValue), ("expand", noDevices ? "none" : nil)])
            let request = client.request(.GET, path, accept: format.contentType)
            let response = try await HTTPClient.shared.execute(request, timeout: .hours(24))
            guard response.status.code == 200 else {
                let body = try await response.body.collect(upTo: 1 << 20)
                throw DaemonClient.Failure(status: Int(response.status.code), message: DaemonClient.errorMessage([UInt8](buffer: body)))
            }
            let target = output ?? Self.attachmentName(response.headers.first(name: "Content-Disposition")) ?? defaultName(format)
            let partial = target + ".part"
            guard FileManager.default.createFile(atPath: partial, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw ValidationError("cannot create \(partial)")
            }
            let progress = DownloadProgress(enabled: isatty(STDERR_FILENO) == 1)
            do {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: partial))
                defer { try? handle.close() }
                // One chunk at a time: the archive is never held in memory, whatever its size.
                for try await chunk in response.body {
                    try handle.write(contentsOf: Data(chunk.readableBytesView))
                    progress.add(chunk.readableBytes)
                }
                try handle.synchronize()
            } catch {
                progress.finish()
                try? FileManager.default.removeItem(atPath: partial)
                throw error
            }
            progress.finish()
            if FileManager.default.fileExists(atPath: target) { try FileManager.default.removeItem(atPath: target) }
            try FileManager.default.moveItem(atPath: partial, toPath: target)
            print("saved \(target) (\(ByteCount.describe(progress.received)))")
            try BundleReportPrinter.verifyAndPrint(target)
        }

        /// The daemon's suggested file name, reduced to a bare name so it cannot point elsewhere.
        static func attachmentName(_ header: String?) -> String? {
            guard let header, let r = header.range(of: "filename=\"") else { return nil }
            let rest = header[r.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { return nil }
            let name = (String(rest[..<end]) as NSString).lastPathComponent
            return name.isEmpty || name.hasPrefix(".") ? nil : name
        }

        /// `mam-bundle-<scope>-<timestamp>.<ext>`, when the daemon suggested none. An identity
        /// scope is not spelled out: a UPN does not belong in a file name that gets attached.
        func defaultName(_ format: ArchiveFormat) -> String {
            let label =
                incident ?? device.map { "device-\($0)" } ?? session.map { "session-\($0)" } ?? app.map { "app-\($0)" } ?? "identity"
            let safe = String(label.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" })
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let stamp = Timestamp.format(milliseconds: now).filter { $0 != "-" && $0 != ":" }.prefix(15)
            return "mam-bundle-\(safe)-\(stamp)Z.\(format.fileExtension)"
        }
    }

    /// `bundle verify FILE`: re-checks an archive received later (e.g. attached to a case).
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-check an archive's files against its manifest; exits non-zero on any mismatch.")
        @Argument(help: "A bundle archive (.zip or .tar.gz).") var file: String

        func run() async throws {
            try BundleReportPrinter.verifyAndPrint(file)
        }
    }
}

/// Verifies an archive with `BundleVerifier` and prints what a support engineer checks
/// before sharing it: scope, window, counts per kind, redaction, and the file list.
enum BundleReportPrinter {
    static func verifyAndPrint(_ path: String) throws {
        let result: BundleVerifier.Result
        do {
            result = try BundleVerifier.verify(archiveAt: path)
        } catch {
            FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
            throw ExitCode(1)
        }
        let manifest = (try? JSONSerialization.jsonObject(with: Data(result.manifest)) as? [String: Any]) ?? [:]
        for line in lines(manifest, verified: result.verified) { print(line) }
        guard result.ok else {
            for p in result.problems { FileHandle.standardError.write(Data("MISMATCH \(p)\n".utf8)) }
            FileHandle.standardError.write(Data("\(path): verification FAILED (\(result.problems.count) problem(s))\n".utf8))
            throw ExitCode(1)
        }
        print("checksums: OK (\(result.verified.count) files match manifest.json)")
    }

    static func lines(_ m: [String: Any], verified: [ManifestFile]) -> [String] {
        let request = m["request"] as? [String: Any] ?? [:]
        let scope = ["incident", "device", "identity", "app", "session"].compactMap { key in
            (request[key] as? String).map { "\(key) \($0)" }
        }
        let counts = m["counts"] as? [String: Any] ?? [:]
        let redaction = m["redaction"] as? [String: Any] ?? [:]
        let values = redaction["valuesRedacted"] as? [String: Any] ?? [:]
        var out = ["scope:     \(scope.joined(separator: ", ")) (\(request["env"] as? String ?? "?"))"]
        if let device = request["storyDevice"] as? String {
            out.append("story:     device \(device) around the upload, with every record the user shared")
        }
        if let devices = request["identityDevices"] as? [String], !devices.isEmpty {
            out.append("devices:   the user's, with their logs: \(devices.joined(separator: ", "))")
        }
        out += [
            "window:    \(request["since"] as? String ?? "?") .. \(request["until"] as? String ?? "?")"
                + ((request["windowDefaulted"] as? Bool) == true ? " (defaults applied)" : ""),
            "records:   " + counts.keys.sorted().map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", "),
        ]
        if (redaction["enabled"] as? Bool) == true {
            let parts = values.keys.sorted().map { "\($0) \(values[$0] ?? 0)" }
            out.append(
                "redaction: ON (\(redaction["method"] as? String ?? "pseudonyms")): \(parts.joined(separator: ", ")), "
                    + "text withheld \(redaction["textWithheld"] ?? 0) (verbose records \(redaction["verboseMessagesScrubbed"] ?? 0))")
        } else {
            let masked = (values["token"] as? Int).map { $0 > 0 ? ", \($0) credentials masked" : "" } ?? ""
            out.append("redaction: OFF — raw personal data (caller holds the pii scope)\(masked); share with care")
        }
        out.append(
            "requested: by \(m["caller"] as? String ?? "?") at \(m["createdAt"] as? String ?? "?"), daemon \(m["daemonVersion"] as? String ?? "?")"
        )
        if let journal = m["journal"] as? [String: Any], (journal["included"] as? Bool) != true {
            out.append("journal:   not included (\(journal["reason"] as? String ?? "unavailable"))")
        }
        out.append("files:")
        let files = m["files"] as? [[String: Any]] ?? []
        let ok = Set(verified.map(\.name))
        for f in files {
            let name = f["name"] as? String ?? "?"
            let size = (f["size"] as? NSNumber)?.int64Value ?? 0
            out.append(
                "  \(ok.contains(name) ? "ok " : "BAD") \(name.padding(toLength: 18, withPad: " ", startingAt: 0)) \(ByteCount.describe(size))"
            )
        }
        return out
    }
}

/// A one-line progress display on stderr (only on a terminal): bytes received and rate,
/// redrawn at most ten times a second so a fast loopback download is not slowed by it.
final class DownloadProgress {
    let enabled: Bool
    private(set) var received: Int64 = 0
    private let start = ContinuousClock.now
    private var lastDraw = ContinuousClock.now

    init(enabled: Bool) { self.enabled = enabled }

    func add(_ bytes: Int) {
        received += Int64(bytes)
        guard enabled, ContinuousClock.now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = .now
        draw()
    }

    func finish() {
        guard enabled else { return }
        draw()
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private func draw() {
        let (s, a) = (ContinuousClock.now - start).components
        let seconds = max(Double(s) + Double(a) / 1e18, 0.001)
        let rate = ByteCount.describe(Int64(Double(received) / seconds))
        FileHandle.standardError.write(Data("\r\u{1B}[Kreceiving bundle: \(ByteCount.describe(received)) (\(rate)/s)".utf8))
    }
}

enum ByteCount {
    static func describe(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) B" : String(format: "%.1f", value) + " " + units[unit]
    }
}
