import ArgumentParser

extension CLI {
    /// Subcommands contributed by other files (bundle, stats, pseudonym, ...; `bench` only points to mamtelemetry-bench): one line each.
    static let extraSubcommands: [any ParsableCommand.Type] = [
        BenchMovedCommand.self, StatsCommand.self, TokensCommand.self, BundleCommand.self, PseudonymCommand.self,
        StatusCodesCommand.self, IncidentsCommand.self,
    ]
}
