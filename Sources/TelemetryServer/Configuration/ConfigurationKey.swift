import Configuration

/// One configuration key, declared once in ``ConfigurationKey/all``: its YAML name, how it
/// is read and checked, where it lands in ``ServerConfiguration``, whether a running daemon
/// applies a change on reload, and the words `--help`, the man page, the README and the
/// shell completions show for it. The loader, the reload diff, the flag and environment
/// spellings and the unknown-key check all walk the same table, so a key cannot be read
/// without being documented, or documented without being read.
struct ConfigurationKey: Sendable {
    enum OnReload: Sendable {
        /// In force as soon as the reload finishes.
        case applied
        /// Read once at start: the listener, the store's files and tuning, limits the
        /// request pipeline was built with, whether auth is on at all.
        case needsRestart
    }

    /// Where `--help` and the man page list the key.
    enum Group: String, Sendable, CaseIterable {
        case server = "Server"
        case store = "Store"
        case clickhouse = "ClickHouse backend"
        case limits = "Request limits"
        case disk = "Disk space"
        case retention = "Retention"
        case auth = "Authentication"
        case journal = "Journal mirror"
        case apps = "Apps"
    }

    /// What a shell offers after the flag.
    enum Completion: Sendable, Equatable {
        case anything
        case file
        case directory
        case words([String])
    }

    /// Reads the key from the merged sources into the configuration, refusing a bad value
    /// with ``ConfigurationError/invalid(key:value:expected:)``. The environment is the
    /// process's own, for the few keys with a fallback outside `MAMTELEMETRY_`.
    typealias Reader = @Sendable (ConfigReader, [String: String], inout ServerConfiguration) throws -> Void

    /// The YAML key (`retention.prod.eventsDays`); the flag and variable derive from it.
    let name: String
    let group: Group
    let onReload: OnReload
    /// The value's name in `--help` (`N`, `DAYS`, `HOST:PORT`).
    let placeholder: String
    /// What the key accepts, as `--help` shows it (`0...9`, `sqlite or clickhouse`).
    let accepts: String
    /// The default as `--help` shows it.
    let defaultText: String
    /// One line for `--help`, the man page and the completions.
    let help: String
    let completion: Completion
    /// A valid value other than the default (several for a list), which the tests load
    /// through every spelling (for a `.file` key, the tests write a file to stand in for it).
    let example: [String]
    let read: Reader
    /// The key's value, as text to compare on reload.
    let value: @Sendable (ServerConfiguration) -> String

    var spelling: ConfigurationSpelling { ConfigurationSpelling(key: name) }

    /// The keys whose values differ between two configurations.
    static func changed(from old: ServerConfiguration, to new: ServerConfiguration) -> [ConfigurationKey] {
        all.filter { $0.value(old) != $0.value(new) }
    }

    /// Reads every key of the table, in table order (so the first bad key is the one named).
    static func readAll(_ config: ConfigReader, environment: [String: String], into c: inout ServerConfiguration) throws {
        for key in all { try key.read(config, environment, &c) }
    }
}

// MARK: - The kinds of key

extension ConfigurationKey {
    /// A whole number in `range`, stored in any integer field.
    static func integer<V: BinaryInteger & Sendable>(
        _ name: String, _ group: Group, _ onReload: OnReload, _ path: any WritableKeyPath<ServerConfiguration, V> & Sendable,
        _ range: ClosedRange<Int>, expected: String? = nil, placeholder: String = "N", help: String
    ) -> ConfigurationKey {
        let expected = expected ?? "a value in \(range)"
        let shown = range.upperBound == Int.max ? "\(range.lowerBound) or more" : "\(range.lowerBound) to \(range.upperBound)"
        let fallback = Int(ServerConfiguration()[keyPath: path])
        return ConfigurationKey(
            name: name, group: group, onReload: onReload, placeholder: placeholder, accepts: shown, defaultText: "\(fallback)",
            help: help, completion: .anything, example: ["\(range.lowerBound == fallback ? range.lowerBound + 1 : range.lowerBound)"],
            read: { config, _, c in
                let v = config.int(forKey: ConfigKey(name), default: Int(c[keyPath: path]))
                guard range.contains(v), let stored = V(exactly: v) else {
                    throw ConfigurationError.invalid(key: name, value: String(v), expected: expected)
                }
                c[keyPath: path] = stored
            },
            value: { "\($0[keyPath: path])" })
    }

    static func bool(
        _ name: String, _ group: Group, _ onReload: OnReload, _ path: any WritableKeyPath<ServerConfiguration, Bool> & Sendable,
        help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, group: group, onReload: onReload, placeholder: "BOOL", accepts: "true or false",
            defaultText: "\(ServerConfiguration()[keyPath: path])", help: help, completion: .words(["true", "false"]),
            example: ["\(!ServerConfiguration()[keyPath: path])"],
            read: { config, _, c in c[keyPath: path] = config.bool(forKey: ConfigKey(name), default: c[keyPath: path]) },
            value: { "\($0[keyPath: path])" })
    }

    /// One word of `words`, parsed into the field's type when it is given.
    static func choice<V: Sendable>(
        _ name: String, _ group: Group, _ onReload: OnReload, _ path: any WritableKeyPath<ServerConfiguration, V> & Sendable,
        words: [String], expected: String, placeholder: String, help: String,
        parse: @escaping @Sendable (String) -> V?, text: @escaping @Sendable (V) -> String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, group: group, onReload: onReload, placeholder: placeholder, accepts: expected,
            defaultText: text(ServerConfiguration()[keyPath: path]), help: help, completion: .words(words),
            example: words.filter { $0 != text(ServerConfiguration()[keyPath: path]) }.prefix(1).map { $0 },
            read: { config, _, c in
                guard let word = config.string(forKey: ConfigKey(name)) else { return }
                guard let v = parse(word) else { throw ConfigurationError.invalid(key: name, value: word, expected: expected) }
                c[keyPath: path] = v
            },
            value: { text($0[keyPath: path]) })
    }

    /// Days kept, fractions allowed (0.25 is six hours), stored in seconds; 0 = no limit.
    static func days(
        _ name: String, _ path: any WritableKeyPath<ServerConfiguration, Int64?> & Sendable, help: String
    ) -> ConfigurationKey {
        let days = Double(ServerConfiguration()[keyPath: path] ?? 0) / 86_400
        return ConfigurationKey(
            name: name, group: .retention, onReload: .applied, placeholder: "DAYS", accepts: "0 to 36500, fractions allowed (0 = no limit)",
            defaultText: days.rounded() == days ? "\(Int(days))" : "\(days)", help: help, completion: .anything,
            example: [days == 0.5 ? "1" : "0.5"],
            read: { config, _, c in
                let v = config.double(forKey: ConfigKey(name), default: Double(c[keyPath: path] ?? 0) / 86_400)
                guard (0...36_500).contains(v) else {
                    throw ConfigurationError.invalid(key: name, value: String(v), expected: "a number of days from 0 to 36500")
                }
                let seconds = Int64((v * 86_400).rounded())
                c[keyPath: path] = seconds == 0 ? nil : seconds
            },
            value: { "\($0[keyPath: path] ?? 0)" })
    }

    /// A size in bytes where 0 means no limit.
    static func bytesOrOff(
        _ name: String, _ path: any WritableKeyPath<ServerConfiguration, Int64?> & Sendable, help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, group: .retention, onReload: .applied, placeholder: "N", accepts: "0 or more (0 = no limit)",
            defaultText: "\(ServerConfiguration()[keyPath: path] ?? 0)", help: help, completion: .anything,
            example: [ServerConfiguration()[keyPath: path] == 1 << 20 ? "0" : "1048576"],
            read: { config, _, c in
                let v = config.int(forKey: ConfigKey(name), default: Int(c[keyPath: path] ?? 0))
                guard v >= 0 else { throw ConfigurationError.invalid(key: name, value: String(v), expected: "a value in \(0...Int.max)") }
                c[keyPath: path] = v == 0 ? nil : Int64(v)
            },
            value: { "\($0[keyPath: path] ?? 0)" })
    }

    /// A list of app ids.
    static func list(
        _ name: String, _ path: any WritableKeyPath<ServerConfiguration, [String]> & Sendable, help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, group: .apps, onReload: .applied, placeholder: "APP,...",
            accepts: "app ids (a YAML list, or comma-separated)", defaultText: "none",
            help: help, completion: .anything, example: ["com.example.one", "com.example.two"],
            read: { config, _, c in c[keyPath: path] = config.stringArray(forKey: ConfigKey(name), default: []) },
            value: { $0[keyPath: path].sorted().joined(separator: ",") })
    }
}
