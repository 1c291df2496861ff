import ArgumentParser
import ClientOptions
import Foundation
import NIOHTTP1

/// `mamtelemetryctl pseudonym <upn>`: the `user-…` pseudonym of a user, as queries and
/// bundles show it and the journal carries it (`MAM_IDENTITY_HASH`), so a support engineer
/// can follow one user in `journalctl`. The key lives only in the daemon, which answers only
/// a token with the `pii` scope.
struct PseudonymCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pseudonym", abstract: "Print the pseudonym of a UPN, for journalctl MAM_IDENTITY_HASH= (needs a pii token).")

    @OptionGroup var server: ServerOptions
    @Argument(help: "The user's UPN (any casing).") var identity: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = DaemonClient(options: server)
        let body = try await client.send(client.request(.GET, "/v1/pseudonyms" + queryString([("identity", identity)])))
        switch output.output {
        case .json: return AnswerOutput.writeVerbatim(body)
        case .ndjson: return try AnswerOutput.writeNDJSON(body, items: nil)
        case .table: break
        }
        let answer = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        guard let pseudonym = answer["pseudonym"] as? String else {
            throw DaemonClient.Failure(status: 200, message: "the daemon's answer holds no pseudonym")
        }
        print(pseudonym)
        FileHandle.standardError.write(Data("filter the journal with: journalctl -u mamtelemetryd MAM_IDENTITY_HASH=\(pseudonym)\n".utf8))
    }
}
