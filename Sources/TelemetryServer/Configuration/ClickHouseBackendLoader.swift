import ClickHouseStore
import Configuration
import Foundation

/// The backend keys' rows (`store.backend`, `clickhouse.*`, `collector.id`) of the
/// configuration table, and where the ClickHouse password comes from: the file
/// `clickhouse.passwordFile` names, else `MAMTELEMETRY_CLICKHOUSE_PASSWORD`. A flag is refused
/// earlier (`ConfigurationVocabulary`), since a command line is public.
enum ClickHouseBackendLoader {
    static let passwordVariable = "MAMTELEMETRY_CLICKHOUSE_PASSWORD"

    /// In reading order: `store.backend` comes first so `collector.id` can require a number
    /// with the clickhouse backend.
    static let keys: [ConfigurationKey] = [
        .choice(
            "store.backend", .store, .needsRestart, \.backend, words: StoreBackend.allCases.map(\.rawValue),
            expected: "sqlite or clickhouse", placeholder: "NAME",
            help: "sqlite (embedded), or clickhouse with this store as a spool forwarded to ClickHouse",
            parse: { StoreBackend(rawValue: $0) }, text: \.rawValue),
        ConfigurationKey(
            name: "clickhouse.url", group: .clickhouse, onReload: .needsRestart, placeholder: "URL,...",
            accepts: "http(s)://HOST:PORT URLs, comma-separated", defaultText: defaults.urls.map(\.absoluteString).joined(separator: ","),
            help: "ClickHouse HTTP endpoints; the next is tried when one is unreachable", completion: .anything,
            example: ["http://127.0.0.2:8123,http://127.0.0.3:8123"],
            read: { config, _, c in
                // A flag's `a,b` arrives as two values (the command-line provider splits at commas).
                guard
                    let text = config.string(forKey: "clickhouse.url")
                        ?? config.stringArray(forKey: "clickhouse.url")?.joined(separator: ",")
                else { return }
                let urls = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                let parsed = urls.compactMap { u -> URL? in
                    guard let url = URL(string: u), url.scheme == "http" || url.scheme == "https", url.host != nil else { return nil }
                    return url
                }
                guard !parsed.isEmpty, parsed.count == urls.count else {
                    throw ConfigurationError.invalid(
                        key: "clickhouse.url", value: text, expected: "one or more http(s)://HOST:PORT URLs, comma-separated")
                }
                c.clickhouse.urls = parsed
            },
            value: { $0.clickhouse.urls.map(\.absoluteString).joined(separator: ",") }),
        ConfigurationKey(
            name: "clickhouse.database", group: .clickhouse, onReload: .needsRestart, placeholder: "NAME",
            accepts: "letters, digits and _", defaultText: defaults.database,
            help: "production database; PPE data goes to <database>_ppe", completion: .anything,
            example: ["mam_example"],
            read: { config, _, c in
                let database = config.string(forKey: "clickhouse.database", default: c.clickhouse.database)
                guard ClickHouseIdentifier.isValid(database), ClickHouseIdentifier.isValid(database + "_ppe") else {
                    throw ConfigurationError.invalid(
                        key: "clickhouse.database", value: database, expected: "a name of letters, digits and _")
                }
                c.clickhouse.database = database
            },
            value: { $0.clickhouse.database }),
        ConfigurationKey(
            name: "clickhouse.cluster", group: .clickhouse, onReload: .needsRestart, placeholder: "NAME",
            accepts: "letters, digits and _", defaultText: "none",
            help: "remote_servers cluster: local tables plus Distributed tables over them", completion: .anything,
            example: ["mam_cluster"],
            read: { config, _, c in
                guard let cluster = config.string(forKey: "clickhouse.cluster"), !cluster.isEmpty else { return }
                guard ClickHouseIdentifier.isValid(cluster) else {
                    throw ConfigurationError.invalid(key: "clickhouse.cluster", value: cluster, expected: "a name of letters, digits and _")
                }
                c.clickhouse.cluster = cluster
            },
            value: { $0.clickhouse.cluster ?? "" }),
        ConfigurationKey(
            name: "clickhouse.user", group: .clickhouse, onReload: .needsRestart, placeholder: "NAME", accepts: "a user name",
            defaultText: "none", help: "ClickHouse user", completion: .anything,
            example: ["mam"],
            read: { config, _, c in c.clickhouse.user = config.string(forKey: "clickhouse.user") },
            value: { $0.clickhouse.user ?? "" }),
        ConfigurationKey(
            name: "clickhouse.passwordFile", group: .clickhouse, onReload: .needsRestart, placeholder: "FILE",
            accepts: "a readable file", defaultText: "none (then \(passwordVariable))",
            help: "file holding the ClickHouse password (never a flag: a command line is public)", completion: .file,
            example: ["/etc/mamtelemetryd/clickhouse.password"],
            read: { config, environment, c in
                c.clickhouse.passwordFile = config.string(forKey: "clickhouse.passwordFile")
                if let file = c.clickhouse.passwordFile {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        throw ConfigurationError.unreadable(path: file, reason: "the ClickHouse password file cannot be read")
                    }
                    c.clickhouse.password = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
                } else {
                    c.clickhouse.password = environment[passwordVariable]
                }
            },
            value: { $0.clickhouse.passwordFile ?? "" }),
        .bool(
            "clickhouse.recogniseRetries", .clickhouse, .needsRestart, \.clickhouse.recogniseRetries,
            help: "before acknowledging, ask ClickHouse whether another collector already stored a request's records"),
        .choice(
            "clickhouse.compression", .clickhouse, .needsRestart, \.clickhouse.compression,
            words: ClickHouseWireCompression.allCases.map(\.rawValue), expected: "auto, gzip or none", placeholder: "MODE",
            help: "gzip requests and answers; auto: to every endpoint but a loopback address",
            parse: { ClickHouseWireCompression(rawValue: $0) }, text: \.rawValue),
        .integer(
            "clickhouse.spoolMaxBytes", .clickhouse, .needsRestart, \.clickhouse.spoolMaxBytes, (1 << 20)...Int.max,
            expected: "at least 1048576 bytes", help: "past this many compressed bytes waiting for ClickHouse, ingest answers 503"),
        ConfigurationKey(
            name: "collector.id", group: .clickhouse, onReload: .needsRestart, placeholder: "N", accepts: "0 to 255",
            defaultText: "none (required with store.backend clickhouse)",
            help: "this collector's number in record ids, unique per collector", completion: .anything,
            example: ["7"],
            read: { config, _, c in
                if let id = config.int(forKey: "collector.id") {
                    guard (0...255).contains(id) else {
                        throw ConfigurationError.invalid(
                            key: "collector.id", value: String(id), expected: "a number from 0 to 255, unique per collector")
                    }
                    c.clickhouse.collectorID = UInt8(id)
                }
                if c.backend == .clickhouse, c.clickhouse.collectorID == nil {
                    // Two collectors with the same number would fold each other's records together.
                    throw ConfigurationError.invalid(
                        key: "collector.id", value: "(unset)",
                        expected: "a number from 0 to 255, unique per collector, with store.backend clickhouse")
                }
            },
            value: { $0.clickhouse.collectorID.map { "\($0)" } ?? "" }),
    ]

    private static let defaults = ClickHouseBackendConfiguration()
}
