import TelemetryModel
import TelemetryStore

/// Every configuration key, and whether a running daemon applies a change to it on reload
/// or only at the next start. `ReloadService` compares the file it re-read with what is in
/// force key by key, applies what it can and names the rest in its log line and in
/// `STATUS=`, so an operator is never left guessing whether a change took effect.
struct ConfigurationKey: Sendable {
    enum OnReload: Sendable {
        /// In force as soon as the reload finishes.
        case applied
        /// Read once at start: the listener, the store's files and tuning, limits the
        /// request pipeline was built with, whether auth is on at all.
        case needsRestart
    }

    /// The YAML key (`retention.prod.eventsDays`).
    let name: String
    let onReload: OnReload
    /// The key's value, as text to compare.
    let value: @Sendable (ServerConfiguration) -> String

    init(_ name: String, _ onReload: OnReload, _ value: @escaping @Sendable (ServerConfiguration) -> String) {
        self.name = name
        self.onReload = onReload
        self.value = value
    }

    /// The keys whose values differ between two configurations.
    static func changed(from old: ServerConfiguration, to new: ServerConfiguration) -> [ConfigurationKey] {
        all.filter { $0.value(old) != $0.value(new) }
    }

    static let all: [ConfigurationKey] = {
        var keys: [ConfigurationKey] = [
            .init("listen", .needsRestart) { "\($0.host):\($0.port)" },
            .init("dataDir", .needsRestart) { $0.dataDirectory.path },
            .init("logLevel", .applied) { $0.logLevel },
            .init("store.zlibLevel", .needsRestart) { "\($0.store.zlibLevel)" },
            .init("store.maxBatchRecords", .needsRestart) { "\($0.store.maxBatchRecords)" },
            .init("store.compactAfterSeconds", .needsRestart) { "\($0.store.compaction.minimumAgeSeconds)" },
            .init("store.backend", .needsRestart) { $0.backend.rawValue },
            .init("clickhouse.url", .needsRestart) { $0.clickhouse.urls.map(\.absoluteString).joined(separator: ",") },
            .init("clickhouse.database", .needsRestart) { $0.clickhouse.database },
            .init("clickhouse.cluster", .needsRestart) { $0.clickhouse.cluster ?? "" },
            .init("clickhouse.user", .needsRestart) { $0.clickhouse.user ?? "" },
            .init("clickhouse.passwordFile", .needsRestart) { $0.clickhouse.passwordFile ?? "" },
            .init("clickhouse.spoolMaxBytes", .needsRestart) { "\($0.clickhouse.spoolMaxBytes)" },
            .init("collector.id", .needsRestart) { $0.clickhouse.collectorID.map { "\($0)" } ?? "" },
            .init("limits.maxBodyBytes", .needsRestart) { "\($0.maxBodyBytes)" },
            .init("limits.maxDecompressedBytes", .needsRestart) { "\($0.inflateLimits.maxOutputBytes)" },
            .init("limits.maxCompressionRatio", .needsRestart) { "\($0.inflateLimits.maxRatio)" },
            .init("limits.maxLineBytes", .needsRestart) { "\($0.decodeLimits.maxLineBytes)" },
            .init("limits.maxRecordsPerRequest", .needsRestart) { "\($0.decodeLimits.maxRecordsPerRequest)" },
            .init("limits.maxDepth", .needsRestart) { "\($0.decodeLimits.maxDepth)" },
            .init("limits.maxFields", .needsRestart) { "\($0.decodeLimits.maxFields)" },
            .init("limits.maxStringBytes", .needsRestart) { "\($0.decodeLimits.maxStringBytes)" },
            .init("limits.maxValuesPerRequest", .needsRestart) { "\($0.decodeLimits.maxValuesPerRequest)" },
            .init("limits.maxInFlightBytes", .needsRestart) { "\($0.maxInFlightBytes)" },
            .init("limits.maxQueuedRecords", .needsRestart) { "\($0.maxQueuedRecords)" },
            .init("limits.perTokenRecordsPerSecond", .applied) { "\($0.perTokenRecordsPerSecond)" },
            .init("disk.minFreeBytes", .applied) { "\($0.disk.minFreeBytes)" },
            .init("disk.minFreeRatio", .applied) { "\($0.disk.minFreeRatio)" },
            .init("disk.keepFreeBytes", .applied) { "\($0.disk.keepFreeBytes)" },
            .init("auth.enabled", .needsRestart) { "\($0.auth.enabled)" },
            .init("auth.metricsRequireToken", .applied) { "\($0.auth.metricsRequireToken)" },
            .init("journal.mirror", .applied) { "\($0.journalMirror)" },
            .init("journal.minLevel", .applied) { $0.journalMinLevel.name },
            .init("journal.personalData", .applied) { $0.journalPersonalData.rawValue },
            // The earlier spelling of the same choice (`raw` is `include`), still read.
            .init("journal.verboseMessages", .applied) { $0.journalPersonalData == .include ? "raw" : "redact" },
            .init("killSwitch.seconds", .applied) { "\($0.killSwitchSeconds)" },
            .init("apps.telemetryDisabled", .applied) { $0.appsTelemetryDisabled.sorted().joined(separator: ",") },
            .init("apps.usePPE", .applied) { $0.appsUsePPE.sorted().joined(separator: ",") },
            .init("retention.intervalSeconds", .applied) { "\($0.retention.passIntervalSeconds)" },
        ]
        for env in TelemetryEnvironment.allCases {
            let limits: @Sendable (ServerConfiguration) -> RetentionPolicy.Limits = { $0.retention.limits(for: env) }
            keys += [
                .init("retention.\(env.rawValue).eventsDays", .applied) { "\(limits($0).eventsMaxAge ?? 0)" },
                .init("retention.\(env.rawValue).logsDays", .applied) { "\(limits($0).logsMaxAge ?? 0)" },
                .init("retention.\(env.rawValue).verboseLogsDays", .applied) { "\(limits($0).verboseLogsMaxAge ?? 0)" },
                .init("retention.\(env.rawValue).maxBytes", .applied) { "\(limits($0).maxBytes ?? 0)" },
            ]
        }
        return keys
    }()
}
