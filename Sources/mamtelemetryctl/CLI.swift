import ArgumentParser

/// `mamtelemetryctl`: the support engineer's and operator's command line for a running
/// mamtelemetryd (query, follow, app registry, bundles, stats).
@main
struct CLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mamtelemetryctl",
        abstract: "Query and operate a mamtelemetryd daemon.",
        subcommands: [EventsCommand.self, LogsCommand.self, AppsCommand.self] + CLI.extraSubcommands)
}
