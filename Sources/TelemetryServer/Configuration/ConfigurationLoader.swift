import Configuration
public import Foundation
import SystemPackage

/// Reads the configuration from, highest priority first: command-line flags
/// (`--data-dir`), environment variables (`MAMTELEMETRY_DATA_DIR`), the YAML file
/// (`dataDir:`), then built-in defaults, for each key of the table (``ConfigurationKey/all``).
/// The same loader runs again on SIGHUP. A spelling none of those sources knows stops the
/// load (`ConfigurationVocabulary`).
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
        try ConfigurationKey.readAll(config, environment: environment, into: &c)
        return c
    }
}
