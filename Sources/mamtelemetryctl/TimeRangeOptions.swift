import ArgumentParser

/// `--since` and `--until`, shared by every subcommand that takes a time. `.unconditional`
/// because a relative time starts with a dash (`--since -3d`): without it the parser reads
/// `-3d` as an option and refuses the command with "Missing value for '--since'".
struct TimeRangeOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Start: RFC 3339, epoch ms, or relative (-15m, -2h, -3d).")
    var since: String?
    @Option(parsing: .unconditional, help: "End: RFC 3339, epoch ms, or relative (default: now).")
    var until: String?

    var pairs: [(String, String?)] { [("since", since), ("until", until)] }
}
