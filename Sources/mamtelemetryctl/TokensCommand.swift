import ArgumentParser
import ClientOptions
import Foundation
import NIOHTTP1
import TelemetryModel

/// `mamtelemetryctl tokens create|list|revoke`: the daemon's bearer tokens. The
/// daemon keeps only a hash of each secret, so `create` is the one chance to see it.
struct TokensCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens", abstract: "Manage bearer tokens (needs an admin token).",
        subcommands: [Create.self, List.self, Revoke.self])

    static let scopes = ["ingest", "read", "bundle", "pii", "admin"]

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a token and print its secret (shown once).")
        @OptionGroup var server: ServerOptions
        @Option(help: "A name saying who or what uses the token.") var name: String
        @Option(name: .customLong("scope"), help: "A scope: ingest, read, bundle, pii or admin (repeat for several).")
        var scopes: [String] = []
        @Option(name: .customLong("app"), help: "Bind an ingest token to an app id (repeat for several; none: any app).")
        var apps: [String] = []

        func validate() throws {
            guard !scopes.isEmpty else {
                throw ValidationError("give at least one --scope (\(TokensCommand.scopes.joined(separator: ", ")))")
            }
            for s in scopes where !TokensCommand.scopes.contains(s) {
                throw ValidationError("unknown scope '\(s)'; scopes are \(TokensCommand.scopes.joined(separator: ", "))")
            }
        }

        func run() async throws {
            let client = DaemonClient(options: server)
            let body = try JSONSerialization.data(withJSONObject: ["name": name, "scopes": scopes, "apps": apps] as [String: Any])
            let answer = try await client.send(client.request(.POST, "/v1/tokens", body: [UInt8](body)))
            let obj = try JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any] ?? [:]
            let info = obj["info"] as? [String: Any] ?? [:]
            guard let secret = obj["token"] as? String else {
                throw DaemonClient.Failure(status: 200, message: "the daemon's answer holds no token")
            }
            FileHandle.standardError.write(
                Data("created token \(info["id"] as? String ?? "?") '\(name)'; the secret below is shown only now:\n".utf8))
            print(secret)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never their secrets).")
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = DaemonClient(options: server)
            let body = try await client.send(client.request(.GET, "/v1/tokens"))
            switch output.output {
            case .json: return AnswerOutput.writeVerbatim(body)
            case .ndjson: return try AnswerOutput.writeNDJSON(body, items: "tokens")
            case .table: break
            }
            let obj = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
            var rows = [["ID", "NAME", "SCOPES", "APPS", "CREATED", "STATE"]]
            for t in obj["tokens"] as? [[String: Any]] ?? [] {
                let scopes = (t["scopes"] as? [String] ?? []).sorted().joined(separator: ",")
                let apps = (t["apps"] as? [String] ?? []).joined(separator: ",")
                let created = (t["createdAt"] as? NSNumber).map { Timestamp.format(milliseconds: $0.int64Value) } ?? ""
                rows.append([
                    t["id"] as? String ?? "", t["name"] as? String ?? "", scopes, apps.isEmpty ? "any" : apps, created,
                    (t["revoked"] as? Bool ?? false) ? "revoked" : "active",
                ])
            }
            print(Table.render(rows))
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token by id; it is refused from now on.")
        @OptionGroup var server: ServerOptions
        @Argument(help: "The token id (the ID column of `tokens list`).") var id: String

        func run() async throws {
            let client = DaemonClient(options: server)
            _ = try await client.send(client.request(.DELETE, "/v1/tokens/" + id))
            print("revoked \(id)")
        }
    }
}
