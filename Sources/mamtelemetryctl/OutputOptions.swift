import ArgumentParser
import Foundation

/// How a query command prints the daemon's answer.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    /// Aligned columns for a person.
    case table
    /// The daemon's JSON answer, byte for byte.
    case json
    /// One JSON object per line: the answer's items (events, log records, tokens, apps,
    /// stats buckets), or the whole answer when it is not a list.
    case ndjson
}

/// `--output table|json|ndjson`, shared by every query command so scripts can rely on one
/// spelling.
struct OutputOptions: ParsableArguments {
    @Option(help: "table (default), json (the daemon's answer) or ndjson (one item per line).")
    var output: OutputFormat = .table
}

/// Writes answers in the machine-readable formats.
enum AnswerOutput {
    /// The daemon's bytes as they came, ending in a newline so a shell prompt is not glued on.
    static func writeVerbatim(_ body: [UInt8]) {
        FileHandle.standardOutput.write(Data(body))
        if body.last != 0x0A { FileHandle.standardOutput.write(Data("\n".utf8)) }
    }

    /// One compact JSON object per line.
    static func writeNDJSON(_ items: [Any]) throws {
        var out = Data()
        for item in items {
            out.append(try JSONSerialization.data(withJSONObject: item, options: [.sortedKeys, .withoutEscapingSlashes]))
            out.append(0x0A)
        }
        FileHandle.standardOutput.write(out)
    }

    /// The answer's list under `member` as NDJSON, or the whole answer as one line when it has none.
    static func writeNDJSON(_ body: [UInt8], items member: String?) throws {
        let answer = try JSONSerialization.jsonObject(with: Data(body))
        if let member, let items = (answer as? [String: Any])?[member] as? [Any] {
            try writeNDJSON(items)
        } else {
            try writeNDJSON([answer])
        }
    }
}

/// Whether to colour terminal output: only on a terminal, and never when `NO_COLOR` is set
/// to anything non-empty (https://no-color.org), so pipes, files and CI logs get plain text.
enum Terminal {
    static func colour(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        isatty(STDOUT_FILENO) == 1 && (environment["NO_COLOR"] ?? "").isEmpty
    }
}
