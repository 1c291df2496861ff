import ClickHouseStore
import Configuration
import Foundation

/// Reads the backend keys (`store.backend`, `clickhouse.*`, `collector.id`) and resolves the
/// ClickHouse password: from `clickhouse.passwordFile`, else `MAMTELEMETRY_CLICKHOUSE_PASSWORD`.
/// A flag is refused earlier (`ConfigurationVocabulary`), since a command line is public.
enum ClickHouseBackendLoader {
    static let passwordVariable = "MAMTELEMETRY_CLICKHOUSE_PASSWORD"

    static func load(_ config: ConfigReader, environment: [String: String], into c: inout ServerConfiguration) throws {
        if let backend = config.string(forKey: "store.backend") {
            guard let b = StoreBackend(rawValue: backend) else {
                throw ConfigurationError.invalid(key: "store.backend", value: backend, expected: "sqlite or clickhouse")
            }
            c.backend = b
        }
        var ch = c.clickhouse
        if let text = config.string(forKey: "clickhouse.url") {
            let urls = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let parsed = urls.compactMap { u -> URL? in
                guard let url = URL(string: u), url.scheme == "http" || url.scheme == "https", url.host != nil else { return nil }
                return url
            }
            guard !parsed.isEmpty, parsed.count == urls.count else {
                throw ConfigurationError.invalid(
                    key: "clickhouse.url", value: text, expected: "one or more http(s)://HOST:PORT URLs, comma-separated")
            }
            ch.urls = parsed
        }
        ch.database = config.string(forKey: "clickhouse.database", default: ch.database)
        guard ClickHouseIdentifier.isValid(ch.database), ClickHouseIdentifier.isValid(ch.database + "_ppe") else {
            throw ConfigurationError.invalid(key: "clickhouse.database", value: ch.database, expected: "a name of letters, digits and _")
        }
        if let cluster = config.string(forKey: "clickhouse.cluster"), !cluster.isEmpty {
            guard ClickHouseIdentifier.isValid(cluster) else {
                throw ConfigurationError.invalid(key: "clickhouse.cluster", value: cluster, expected: "a name of letters, digits and _")
            }
            ch.cluster = cluster
        }
        ch.user = config.string(forKey: "clickhouse.user")
        ch.passwordFile = config.string(forKey: "clickhouse.passwordFile")
        if let file = ch.passwordFile {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError.unreadable(path: file, reason: "the ClickHouse password file cannot be read")
            }
            ch.password = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        } else {
            ch.password = environment[passwordVariable]
        }
        let spool = config.int(forKey: "clickhouse.spoolMaxBytes", default: Int(ch.spoolMaxBytes))
        guard spool >= 1 << 20 else {
            throw ConfigurationError.invalid(key: "clickhouse.spoolMaxBytes", value: String(spool), expected: "at least 1048576 bytes")
        }
        ch.spoolMaxBytes = Int64(spool)
        if let id = config.int(forKey: "collector.id") {
            guard (0...255).contains(id) else {
                throw ConfigurationError.invalid(
                    key: "collector.id", value: String(id), expected: "a number from 0 to 255, unique per collector")
            }
            ch.collectorID = UInt8(id)
        }
        if c.backend == .clickhouse, ch.collectorID == nil {
            // Two collectors with the same number would fold each other's records together.
            throw ConfigurationError.invalid(
                key: "collector.id", value: "(unset)",
                expected: "a number from 0 to 255, unique per collector, with store.backend clickhouse")
        }
        c.clickhouse = ch
    }
}
