import ArgumentParser
import Foundation

/// Where the daemon is and how to authenticate, shared by every subcommand.
struct ServerOptions: ParsableArguments {
    @Option(name: .long, help: "Daemon base URL (env MAMTELEMETRY_URL).")
    var url: String = ProcessInfo.processInfo.environment["MAMTELEMETRY_URL"] ?? "http://127.0.0.1:8470"

    @Option(name: .long, help: "Bearer token (env MAMTELEMETRY_TOKEN).")
    var token: String?

    /// The token to send: `--token`, else `MAMTELEMETRY_TOKEN`, else the daemon's first-start
    /// admin token when this host can read it.
    var resolvedToken: String? {
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
