import ArgumentParser
import ClientOptions
import Foundation
import NIOHTTP1
import TelemetryModel

/// `mamtelemetryctl status-codes [CODE|NAME]`: what an enrollment status code means and what
/// support does next, from the daemon's `GET /v1/status-codes` (the table it explains with).
struct StatusCodesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status-codes", abstract: "Explain enrollment status codes: meaning and next step for support.")

    @OptionGroup var server: ServerOptions
    @Argument(help: "A code (200) or name (AccountNotLicensed, case-insensitive); all codes when left out.")
    var code: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = DaemonClient(options: server)
        let body = try await client.send(client.request(.GET, "/v1/status-codes"))
        let answer = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        var codes = answer["statusCodes"] as? [[String: Any]] ?? []
        if let code {
            let wanted = code.lowercased()
            codes = codes.filter { "\($0["code"] ?? "")" == wanted || ($0["name"] as? String)?.lowercased() == wanted }
            guard !codes.isEmpty else {
                throw ValidationError("'\(code)' is not a documented enrollment status code (100-104 succeed, 200-227 fail)")
            }
        }
        switch output.output {
        case .json where code == nil: AnswerOutput.writeVerbatim(body)
        case .json:
            // The daemon's answer, narrowed to the code asked for.
            var narrowed = answer
            narrowed["statusCodes"] = codes
            AnswerOutput.writeVerbatim(Array(try JSONSerialization.data(withJSONObject: narrowed, options: [.sortedKeys])))
        case .ndjson: try AnswerOutput.writeNDJSON(codes)
        case .table:
            var rows = [["CODE", "NAME", "MEANING", "NEXT STEP"]]
            for c in codes {
                rows.append([
                    "\(c["code"] ?? "")", c["name"] as? String ?? "", c["meaning"] as? String ?? "", c["nextStep"] as? String ?? "",
                ])
            }
            print(Table.render(rows))
        }
    }
}

/// The lines under a table that explain the failure codes it shows, so an engineer reading
/// `AccountNotLicensed (200)` also reads what it means and what to do.
enum StatusLegend {
    static func lines(for codes: some Sequence<Int>) -> [String] {
        Set(codes).sorted().compactMap { code in
            guard let e = EnrollmentStatus.explanation(of: code), !e.succeeded else { return nil }
            return "\(EnrollmentStatus.label(of: code)): \(e.meaning) Next: \(e.nextStep)"
        }
    }
}
