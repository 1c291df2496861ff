import ArgumentParser
import ClientOptions
import Foundation
import InfoPlist
import NIOHTTP1
import TelemetryModel

/// `mamtelemetryctl apps import|list|remove`: the daemon's app registry.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "Manage the app registry (per-app MAM flags).",
        subcommands: [Import.self, List.self, Remove.self])

    /// Reads an app's real Info.plist (XML or binary) and registers its IntuneMAMSettings flags.
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register an app's flags from its Info.plist.")
        @OptionGroup var server: ServerOptions
        @Argument(help: "Path to the app's Info.plist (or MAMEnvironment.plist).") var plist: String
        @Option(help: "Bundle id, when the plist has no CFBundleIdentifier.") var appId: String?

        func run() async throws {
            let data = try Data(contentsOf: URL(fileURLWithPath: plist))
            let settings = try InfoPlistSettings(data: data)
            guard let id = appId ?? settings.bundleId else {
                throw ValidationError("\(plist) has no CFBundleIdentifier; pass --app-id")
            }
            var body: [String: Any] = ["source": "plist"]
            if let v = settings.flags.telemetryDisabled { body["telemetryDisabled"] = v }
            if let v = settings.flags.usePPE { body["usePPE"] = v }
            if let v = settings.flags.verboseLogging { body["verboseLogging"] = v }
            let client = DaemonClient(options: server)
            let encoded = try JSONSerialization.data(withJSONObject: body)
            let path = "/v1/apps/" + (id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id)
            _ = try await client.send(client.request(.PUT, path, body: [UInt8](encoded)))
            print(
                "registered \(id): telemetryDisabled=\(describe(settings.flags.telemetryDisabled)) usePPE=\(describe(settings.flags.usePPE)) verboseLogging=\(describe(settings.flags.verboseLogging))"
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registered apps.")
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = DaemonClient(options: server)
            let body = try await client.send(client.request(.GET, "/v1/apps"))
            switch output.output {
            case .json: return AnswerOutput.writeVerbatim(body)
            case .ndjson: return try AnswerOutput.writeNDJSON(body, items: "apps")
            case .table: break
            }
            let obj = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
            var rows = [["APP", "TELEMETRY DISABLED", "PPE", "VERBOSE", "SOURCE"]]
            for a in obj["apps"] as? [[String: Any]] ?? [] {
                let f = a["flags"] as? [String: Any] ?? [:]
                rows.append([
                    a["appId"] as? String ?? "", describe(f["telemetryDisabled"] as? Bool), describe(f["usePPE"] as? Bool),
                    describe(f["verboseLogging"] as? Bool), a["source"] as? String ?? "",
                ])
            }
            print(Table.render(rows))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an app from the registry.")
        @OptionGroup var server: ServerOptions
        @Argument var appId: String

        func run() async throws {
            let client = DaemonClient(options: server)
            _ = try await client.send(client.request(.DELETE, "/v1/apps/" + appId))
            print("removed \(appId)")
        }
    }
}

private func describe(_ v: Bool?) -> String { v.map { $0 ? "yes" : "no" } ?? "-" }
