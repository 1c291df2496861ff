import Configuration
import Foundation
import Logging
import SystemPackage
import Systemd
import TelemetryModel

/// Reads the configuration from, highest priority first: command-line flags
/// (`--data-dir`), environment variables (`MAMTELEMETRY_DATA_DIR`), the YAML file
/// (`dataDir:`), then built-in defaults. The same loader runs again on SIGHUP. A spelling
/// none of those sources knows stops the load (`ConfigurationVocabulary`).
public enum ConfigurationLoader {
    public static func load(
        arguments: [String] = CommandLine.arguments,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> ServerConfiguration {
        try ConfigurationVocabulary.check(arguments: arguments)
        try ConfigurationVocabulary.check(environment: environment)
        let prefix = ConfigurationSpelling.environmentPrefix
        var env: [String: String] = [:]
        for (k, v) in environment where k.hasPrefix(prefix) { env[String(k.dropFirst(prefix.count))] = v }

        var providers: [any ConfigProvider] = [
            CommandLineArgumentsProvider(arguments: arguments),
            EnvironmentVariablesProvider(environmentVariables: env),
        ]
        let bootstrap = ConfigReader(providers: providers)
        let file = bootstrap.string(forKey: "config")
        if let file {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw ConfigurationError.unreadable(path: file, reason: "no such readable file")
            }
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw ConfigurationError.unreadable(path: file, reason: "\(error)")
            }
            try ConfigurationVocabulary.check(yaml: text, file: file)
            do {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(file)))
            } catch {
                throw ConfigurationError.unreadable(path: file, reason: "\(error)")
            }
        }
        let config = ConfigReader(providers: providers)
        var c = ServerConfiguration()
        c.configFile = file
        if let listen = config.string(forKey: "listen") { try c.setListen(listen) }
        if let dir = config.string(forKey: "dataDir") ?? environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init) {
            c.dataDirectory = URL(fileURLWithPath: dir)
        }
        c.logLevel = config.string(forKey: "logLevel", default: c.logLevel)
        guard Logger.Level(rawValue: c.logLevel) != nil else {
            throw ConfigurationError.invalid(
                key: "logLevel", value: c.logLevel, expected: Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
        }

        c.store.zlibLevel = Int32(try bounded(config, "store.zlibLevel", Int(c.store.zlibLevel), 0...9))
        c.store.maxBatchRecords = try bounded(config, "store.maxBatchRecords", c.store.maxBatchRecords, 1...1_000_000)
        c.store.compaction.minimumAgeSeconds = Int64(
            try bounded(config, "store.compactAfterSeconds", Int(c.store.compaction.minimumAgeSeconds), 0...31_536_000))

        try ClickHouseBackendLoader.load(config, environment: environment, into: &c)

        c.maxBodyBytes = try bounded(config, "limits.maxBodyBytes", c.maxBodyBytes, 1024...(1 << 30))
        c.inflateLimits.maxOutputBytes = try bounded(
            config, "limits.maxDecompressedBytes", c.inflateLimits.maxOutputBytes, 1024...(4 << 30))
        c.inflateLimits.maxRatio = try bounded(config, "limits.maxCompressionRatio", c.inflateLimits.maxRatio, 2...100_000)
        c.decodeLimits.maxLineBytes = try bounded(config, "limits.maxLineBytes", c.decodeLimits.maxLineBytes, 64...(16 << 20))
        c.decodeLimits.maxRecordsPerRequest = try bounded(
            config, "limits.maxRecordsPerRequest", c.decodeLimits.maxRecordsPerRequest, 1...10_000_000)
        c.decodeLimits.maxDepth = try bounded(config, "limits.maxDepth", c.decodeLimits.maxDepth, 1...512)
        c.decodeLimits.maxFields = try bounded(config, "limits.maxFields", c.decodeLimits.maxFields, 1...100_000)
        c.decodeLimits.maxStringBytes = try bounded(config, "limits.maxStringBytes", c.decodeLimits.maxStringBytes, 16...(16 << 20))
        c.decodeLimits.maxValuesPerRequest = try bounded(
            config, "limits.maxValuesPerRequest", c.decodeLimits.maxValuesPerRequest, 1_000...100_000_000)

        c.maxInFlightBytes = try bounded(config, "limits.maxInFlightBytes", c.maxInFlightBytes, 1 << 20...(64 << 30))
        c.perTokenRecordsPerSecond = try bounded(config, "limits.perTokenRecordsPerSecond", c.perTokenRecordsPerSecond, 0...100_000_000)
        c.maxQueuedRecords = try bounded(config, "limits.maxQueuedRecords", c.maxQueuedRecords, 1000...100_000_000)
        c.disk.minFreeBytes = Int64(try bounded(config, "disk.minFreeBytes", Int(c.disk.minFreeBytes), 0...Int.max))
        let ratio = config.double(forKey: "disk.minFreeRatio", default: c.disk.minFreeRatio)
        guard (0...0.99).contains(ratio) else {
            throw ConfigurationError.invalid(key: "disk.minFreeRatio", value: String(ratio), expected: "a fraction from 0 to 0.99")
        }
        c.disk.minFreeRatio = ratio
        c.disk.keepFreeBytes = Int64(try bounded(config, "disk.keepFreeBytes", Int(c.disk.keepFreeBytes), 0...Int.max))
        c.retention.passIntervalSeconds = try bounded(config, "retention.intervalSeconds", c.retention.passIntervalSeconds, 1...86_400)
        for env in ["prod", "ppe"] {
            var limits = env == "prod" ? c.retention.prod : c.retention.ppe
            // Days may be fractions (0.25 is six hours), kept to the second.
            func days(_ key: String, _ current: Int64?) throws -> Int64? {
                let name = "retention.\(env).\(key)"
                let v = config.double(forKey: ConfigKey(name), default: Double(current ?? 0) / 86_400)
                guard (0...36_500).contains(v) else {
                    throw ConfigurationError.invalid(key: name, value: String(v), expected: "a number of days from 0 to 36500")
                }
                let seconds = Int64((v * 86_400).rounded())
                return seconds == 0 ? nil : seconds
            }
            limits.eventsMaxAge = try days("eventsDays", limits.eventsMaxAge)
            limits.logsMaxAge = try days("logsDays", limits.logsMaxAge)
            limits.verboseLogsMaxAge = try days("verboseLogsDays", limits.verboseLogsMaxAge)
            let maxBytes = try bounded(config, ConfigKey("retention.\(env).maxBytes"), Int(limits.maxBytes ?? 0), 0...Int.max)
            limits.maxBytes = maxBytes == 0 ? nil : Int64(maxBytes)
            if env == "prod" { c.retention.prod = limits } else { c.retention.ppe = limits }
        }

        c.auth.enabled = config.bool(forKey: "auth.enabled", default: c.auth.enabled)
        c.auth.metricsRequireToken = config.bool(forKey: "auth.metricsRequireToken", default: c.auth.metricsRequireToken)

        c.journalMirror = config.bool(forKey: "journal.mirror", default: c.journalMirror)
        if let level = config.string(forKey: "journal.minLevel") {
            guard let l = LogLevel(name: level) else {
                throw ConfigurationError.invalid(key: "journal.minLevel", value: level, expected: "verbose, info, warning or error")
            }
            c.journalMinLevel = l
        }
        if let mode = config.string(forKey: "journal.personalData") {
            guard let m = JournalPersonalData(rawValue: mode) else {
                throw ConfigurationError.invalid(key: "journal.personalData", value: mode, expected: "redact or include")
            }
            c.journalPersonalData = m
        } else if let mode = config.string(forKey: "journal.verboseMessages") {
            // The earlier key: `raw` opted in to verbose text as sent, now to personal data as sent.
            guard mode == "redact" || mode == "raw" else {
                throw ConfigurationError.invalid(key: "journal.verboseMessages", value: mode, expected: "redact or raw")
            }
            c.journalPersonalData = mode == "raw" ? .include : .redact
        }
        c.killSwitchSeconds = try bounded(config, "killSwitch.seconds", c.killSwitchSeconds, 0...(30 * 86_400))
        c.appsTelemetryDisabled = config.stringArray(forKey: "apps.telemetryDisabled", default: [])
        c.appsUsePPE = config.stringArray(forKey: "apps.usePPE", default: [])
        return c
    }

    private static func bounded(_ config: ConfigReader, _ key: ConfigKey, _ fallback: Int, _ range: ClosedRange<Int>) throws -> Int {
        let v = config.int(forKey: key, default: fallback)
        guard range.contains(v) else {
            throw ConfigurationError.invalid(key: key.components.joined(separator: "."), value: String(v), expected: "a value in \(range)")
        }
        return v
    }
}
