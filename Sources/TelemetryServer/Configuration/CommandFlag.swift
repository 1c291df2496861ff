/// The flags the daemon answers itself rather than configuration keys (`--help`,
/// `--store-layout`…): one table that `--help`, the vocabulary check and the shell completions
/// all read, so a command cannot be accepted without being listed, or listed without being
/// completed.
struct CommandFlag: Sendable {
    var flag: String
    var alias: String? = nil
    /// What follows the flag, as `--help` shows it (nil: the flag takes no value).
    var placeholder: String? = nil
    var help: String
    var completion: ConfigurationKey.Completion? = nil

    static let all: [CommandFlag] = [
        CommandFlag(
            flag: "--config", placeholder: "FILE", help: "YAML configuration file (also MAMTELEMETRY_CONFIG; see packaging/config.yaml)",
            completion: .file),
        CommandFlag(flag: "--version", help: "print the version and exit"),
        CommandFlag(
            flag: "--store-layout",
            help:
                "print what the embedded store under the configured data directory holds (records, rows, segments, bytes per column, free pages) as JSON and exit; read-only, safe beside a running daemon"
        ),
        CommandFlag(
            flag: "--generate-completion-script", placeholder: CompletionScript.shells.joined(separator: "|"),
            help: "print a shell completion script and exit", completion: .words(CompletionScript.shells)),
        CommandFlag(flag: "--help", alias: "-h", help: "print this help and exit"),
    ]

    /// Every spelling of every command flag.
    static var spellings: Set<String> { Set(all.flatMap { [$0.flag] + ($0.alias.map { [$0] } ?? []) }) }

    /// How `--help` shows it: `-h, --help`, `--config FILE`.
    var usage: String {
        ([alias, flag].compactMap { $0 }.joined(separator: ", ")) + (placeholder.map { " \($0)" } ?? "")
    }
}
