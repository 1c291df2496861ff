import ArgumentParser

extension CLI {
    /// Subcommands contributed by other files (bundle, stats, bench, pseudonym): one line each.
    static let extraSubcommands: [any ParsableCommand.Type] = [
        BenchCommand.self, StatsCommand.self, TokensCommand.self, BundleCommand.self, PseudonymCommand.self,
        StatusCodesCommand.self, IncidentsCommand.self,
    ]
}
