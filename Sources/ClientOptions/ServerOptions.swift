public import ArgumentParser
import Foundation

/// Where the daemon is and how to authenticate: the options every client command shares
/// (`mamtelemetryctl`'s subcommands and `mamtelemetry-bench`), so both find a daemon and its
/// token the same way.
public struct ServerOptions: ParsableArguments {
    @Option(name: .long, help: "Daemon base URL (env MAMTELEMETRY_URL).")
    public var url: String = ProcessInfo.processInfo.environment["MAMTELEMETRY_URL"] ?? "http://127.0.0.1:8470"

    @Option(name: .long, help: "Bearer token (env MAMTELEMETRY_TOKEN).")
    public var token: String?

    public init() {}

    /// The token to send: `--token`, else `MAMTELEMETRY_TOKEN`, else the daemon's first-start
    /// admin token when this host can read it.
    public var resolvedToken: String? {
        if let token { return token }
        if let env = ProcessInfo.processInfo.environment["MAMTELEMETRY_TOKEN"], !env.isEmpty { return env }
        for dir in [ProcessInfo.processInfo.environment["MAMTELEMETRY_DATA_DIR"], "/var/lib/mamtelemetryd", "data"].compactMap({ $0 }) {
            if let t = try? String(contentsOfFile: dir + "/admin.token", encoding: .utf8) {
                return t.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return nil
    }
}
