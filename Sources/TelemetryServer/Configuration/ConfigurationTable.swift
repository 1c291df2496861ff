import Compression
import Configuration
import Foundation
import Logging
import StoreCore
import Systemd
import TelemetryModel
import TelemetryStore

/// Every configuration key the daemon reads, once, in the order the loader reads them.
/// Add a key here and it is read, range-checked, compared on reload, accepted as a flag,
/// a `MAMTELEMETRY_` variable and a YAML key, listed by `--help`, the man page and the
/// README, and completed by the shells.
extension ConfigurationKey {
    static let all: [ConfigurationKey] =
        server + store + ClickHouseBackendLoader.keys + limits + disk + retention + auth + journal + apps

    private static let server: [ConfigurationKey] = [
        ConfigurationKey(
            name: "listen", group: .server, onReload: .needsRestart, placeholder: "HOST:PORT", accepts: "HOST:PORT ([::1]:8470 for IPv6)",
            defaultText: "127.0.0.1:8470", help: "HTTP listen address; ignored under socket activation", completion: .anything,
            example: ["127.0.0.1:9"],
            read: { config, _, c in if let listen = config.string(forKey: "listen") { try c.setListen(listen) } },
            value: { "\($0.host):\($0.port)" }),
        ConfigurationKey(
            name: "dataDir", group: .server, onReload: .needsRestart, placeholder: "DIR", accepts: "a directory",
            defaultText: "$STATE_DIRECTORY, else ./data", help: "state directory: databases, tokens, pseudonym key",
            completion: .directory,
            example: ["/tmp/mamtelemetryd-example"],
            read: { config, environment, c in
                if let dir = config.string(forKey: "dataDir")
                    ?? environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
                {
                    c.dataDirectory = URL(fileURLWithPath: dir)
                }
            },
            value: { $0.dataDirectory.path }),
        ConfigurationKey(
            name: "logLevel", group: .server, onReload: .applied, placeholder: "LEVEL",
            accepts: Logger.Level.allCases.map(\.rawValue).joined(separator: ", "), defaultText: ServerConfiguration().logLevel,
            help: "the daemon's own log level", completion: .words(Logger.Level.allCases.map(\.rawValue)),
            example: ["debug"],
            read: { config, _, c in
                c.logLevel = config.string(forKey: "logLevel", default: c.logLevel)
                guard Logger.Level(rawValue: c.logLevel) != nil else {
                    throw ConfigurationError.invalid(
                        key: "logLevel", value: c.logLevel, expected: Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
                }
            },
            value: { $0.logLevel }),
    ]

    private static let store: [ConfigurationKey] = [
        .integer(
            "store.zlibLevel", .store, .needsRestart, \.store.zlibLevel, 0...9,
            help: "zlib level of the committer's batches (segments use 6 and 9)"),
        .integer("store.maxBatchRecords", .store, .needsRestart, \.store.maxBatchRecords, 1...1_000_000, help: "records per stored batch"),
        .integer(
            "store.compactAfterSeconds", .store, .needsRestart, \.store.compaction.minimumAgeSeconds, 0...31_536_000,
            help: "age in seconds at which batches are merged into segments"),
        .integer(
            "store.openRunWaitSeconds", .store, .needsRestart, \.store.compaction.openRunWaitSeconds, 0...31_536_000,
            help: "seconds the newest batches wait for more to fill a segment before they are merged as they are"),
    ]

    private static let limits: [ConfigurationKey] = [
        .integer(
            "limits.maxBodyBytes", .limits, .needsRestart, \.maxBodyBytes, 1024...(1 << 30),
            help: "largest request body on the wire (413 past it)"),
        .integer(
            "limits.maxDecompressedBytes", .limits, .needsRestart, \.inflateLimits.maxOutputBytes, 1024...(4 << 30),
            help: "largest body once Content-Encoding is undone"),
        .integer(
            "limits.maxCompressionRatio", .limits, .needsRestart, \.inflateLimits.maxRatio, 2...100_000,
            help: "largest decompressed/compressed ratio past 1 MiB of output"),
        .integer(
            "limits.maxLineBytes", .limits, .needsRestart, \.decodeLimits.maxLineBytes, 64...(16 << 20),
            help: "longest NDJSON line or array element"),
        .integer(
            "limits.maxRecordsPerRequest", .limits, .needsRestart, \.decodeLimits.maxRecordsPerRequest, 1...10_000_000,
            help: "most records in one request (413 past it)"),
        .integer("limits.maxDepth", .limits, .needsRestart, \.decodeLimits.maxDepth, 1...512, help: "deepest JSON nesting in a record"),
        .integer(
            "limits.maxFields", .limits, .needsRestart, \.decodeLimits.maxFields, 1...100_000,
            help: "most members in one record, at every depth"),
        .integer(
            "limits.maxStringBytes", .limits, .needsRestart, \.decodeLimits.maxStringBytes, 16...(16 << 20),
            help: "longest JSON string"),
        .integer(
            "limits.maxValuesPerRequest", .limits, .needsRestart, \.decodeLimits.maxValuesPerRequest, 1_000...100_000_000,
            help: "most values one OTLP request decodes into"),
        .integer(
            "limits.maxInFlightBytes", .limits, .needsRestart, \.maxInFlightBytes, (1 << 20)...(64 << 30),
            help: "ingest body and decoded record bytes held at once"),
        .integer(
            "limits.maxAdmissionWaitMilliseconds", .limits, .needsRestart, \.maxAdmissionWaitMilliseconds, 0...60_000,
            help: "how long a request waits for in-flight room (503 after it)"),
        .integer(
            "limits.perTokenRecordsPerSecond", .limits, .applied, \.perTokenRecordsPerSecond, 0...100_000_000,
            help: "records per second one token may ingest (0 = no limit)"),
        .integer(
            "limits.maxQueuedRecords", .limits, .needsRestart, \.maxQueuedRecords, 1000...100_000_000,
            help: "records waiting for the committer (503 past it)"),
    ]

    private static let disk: [ConfigurationKey] = [
        .integer(
            "disk.minFreeBytes", .disk, .applied, \.disk.minFreeBytes, 0...Int.max,
            help: "refuse ingest (507) below this many free bytes"),
        ConfigurationKey(
            name: "disk.minFreeRatio", group: .disk, onReload: .applied, placeholder: "F", accepts: "0 to 0.99",
            defaultText: "\(ServerConfiguration().disk.minFreeRatio)", help: "refuse ingest (507) below this share free",
            completion: .anything,
            example: ["0.5"],
            read: { config, _, c in
                let ratio = config.double(forKey: "disk.minFreeRatio", default: c.disk.minFreeRatio)
                guard (0...0.99).contains(ratio) else {
                    throw ConfigurationError.invalid(key: "disk.minFreeRatio", value: String(ratio), expected: "a fraction from 0 to 0.99")
                }
                c.disk.minFreeRatio = ratio
            },
            value: { "\($0.disk.minFreeRatio)" }),
        .integer(
            "disk.keepFreeBytes", .disk, .applied, \.disk.keepFreeBytes, 0...Int.max,
            help: "below this many free bytes retention deletes the oldest data (0 = never)"),
    ]

    private static let retention: [ConfigurationKey] =
        [
            .integer(
                "retention.intervalSeconds", .retention, .applied, \.retention.passIntervalSeconds, 1...86_400,
                help: "seconds between retention passes")
        ]
        + retention(
            .prod, \.retention.prod.eventsMaxAge, \.retention.prod.logsMaxAge, \.retention.prod.verboseLogsMaxAge,
            \.retention.prod.maxBytes, \.retention.prod.rollupsMaxAge)
        + retention(
            .ppe, \.retention.ppe.eventsMaxAge, \.retention.ppe.logsMaxAge, \.retention.ppe.verboseLogsMaxAge, \.retention.ppe.maxBytes,
            \.retention.ppe.rollupsMaxAge)

    /// One environment's age and size limits.
    private static func retention(
        _ env: TelemetryEnvironment, _ events: any WritableKeyPath<ServerConfiguration, Int64?> & Sendable,
        _ logs: any WritableKeyPath<ServerConfiguration, Int64?> & Sendable,
        _ verboseLogs: any WritableKeyPath<ServerConfiguration, Int64?> & Sendable,
        _ maxBytes: any WritableKeyPath<ServerConfiguration, Int64?> & Sendable,
        _ rollups: any WritableKeyPath<ServerConfiguration, Int64?> & Sendable
    ) -> [ConfigurationKey] {
        let prefix = "retention.\(env.rawValue)"
        return [
            .days("\(prefix).eventsDays", events, help: "days \(env.rawValue) events are kept"),
            .days("\(prefix).logsDays", logs, help: "days \(env.rawValue) logs are kept"),
            .days("\(prefix).verboseLogsDays", verboseLogs, help: "days \(env.rawValue) verbose logs keep their content"),
            .bytesOrOff("\(prefix).maxBytes", maxBytes, help: "most bytes the \(env.rawValue) database may hold"),
            // Minute rollups keep their own fixed 48 hours of event time (EventRollupScope).
            .days(
                "\(prefix).rollupsDays", rollups,
                help: "days \(env.rawValue) hourly event rollups are kept after their last record (embedded store)"),
        ]
    }

    private static let auth: [ConfigurationKey] = [
        .bool("auth.enabled", .auth, .needsRestart, \.auth.enabled, help: "require bearer tokens (false only for development)"),
        .bool("auth.metricsRequireToken", .auth, .applied, \.auth.metricsRequireToken, help: "require a read token for /metrics"),
    ]

    private static let journal: [ConfigurationKey] = [
        .bool("journal.mirror", .journal, .applied, \.journalMirror, help: "mirror diagnostic log records into the systemd journal"),
        .choice(
            "journal.minLevel", .journal, .applied, \.journalMinLevel, words: LogLevel.allCases.map(\.name),
            expected: "verbose, info, warning or error", placeholder: "LEVEL", help: "lowest level mirrored",
            parse: { LogLevel(name: $0) }, text: \.name),
        .choice(
            "journal.personalData", .journal, .applied, \.journalPersonalData, words: JournalPersonalData.allCases.map(\.rawValue),
            expected: "redact or include", placeholder: "MODE", help: "personal data in mirrored entries: redacted or as sent",
            parse: { JournalPersonalData(rawValue: $0) }, text: \.rawValue),
        // The earlier spelling of journal.personalData (`raw` is `include`), read when that is not set.
        ConfigurationKey(
            name: "journal.verboseMessages", group: .journal, onReload: .applied, placeholder: "MODE", accepts: "redact or raw",
            defaultText: "redact", help: "earlier spelling of journal.personalData (raw = include)",
            completion: .words(["redact", "raw"]),
            example: ["raw"],
            read: { config, _, c in
                guard config.string(forKey: "journal.personalData") == nil, let mode = config.string(forKey: "journal.verboseMessages")
                else { return }
                guard mode == "redact" || mode == "raw" else {
                    throw ConfigurationError.invalid(key: "journal.verboseMessages", value: mode, expected: "redact or raw")
                }
                c.journalPersonalData = mode == "raw" ? .include : .redact
            },
            value: { $0.journalPersonalData == .include ? "raw" : "redact" }),
        .integer(
            "killSwitch.seconds", .apps, .applied, \.killSwitchSeconds, 0...(30 * 86_400),
            help: "how long a client told to stop sending for an opted-out app stays quiet"),
    ]

    private static let apps: [ConfigurationKey] = [
        .list("apps.telemetryDisabled", \.appsTelemetryDisabled, help: "apps whose telemetry is dropped at the edge"),
        .list("apps.usePPE", \.appsUsePPE, help: "apps whose data always goes to the PPE store"),
    ]
}
