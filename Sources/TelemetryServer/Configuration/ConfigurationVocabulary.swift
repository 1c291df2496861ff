import Yams

/// Refuses configuration the daemon would otherwise ignore: an unknown flag, an unknown
/// `MAMTELEMETRY_` environment variable or an unknown YAML key. A misspelt
/// `--retention-prod-max-byts 5` that starts normally leaves the operator believing a limit
/// is in force that is not; stopping with the key named and the nearest real key suggested
/// turns that into a one-line fix.
enum ConfigurationVocabulary {
    /// Flags the daemon answers itself (``CommandFlag``) rather than configuration keys.
    static var commandFlags: Set<String> { CommandFlag.spellings }

    /// `MAMTELEMETRY_` variables that belong to `mamtelemetryctl` (its daemon URL and token):
    /// an operator's shell may export them, and a daemon started from that shell is fine.
    static let clientVariables: Set<String> = ["MAMTELEMETRY_URL", "MAMTELEMETRY_TOKEN"]

    /// Secrets read only from the environment (or a file), never from a flag or the YAML.
    static let secretVariables: Set<String> = [ClickHouseBackendLoader.passwordVariable]

    static func check(arguments: [String]) throws {
        let known = Set(ConfigurationSpelling.all.map(\.flag)).union(commandFlags)
        for argument in arguments.dropFirst() where argument.hasPrefix("-") && Double(argument) == nil {
            let flag = String(argument.prefix { $0 != "=" })
            guard !known.contains(flag) else { continue }
            if flag == "--clickhouse-password" {
                // Every user of the host can read a command line (`ps`).
                throw ConfigurationError.invalid(
                    key: "clickhouse.password", value: "(given on the command line)",
                    expected:
                        "the password in a file (--clickhouse-password-file) or in \(ClickHouseBackendLoader.passwordVariable), never as a flag"
                )
            }
            throw ConfigurationError.unknown(
                key: flag, source: "command-line option", suggestion: closest(to: flag, among: Array(known)))
        }
    }

    static func check(environment: [String: String]) throws {
        let known = Set(ConfigurationSpelling.all.map(\.environmentVariable)).union(clientVariables).union(secretVariables)
        for name in environment.keys.sorted() where name.hasPrefix(ConfigurationSpelling.environmentPrefix) && !known.contains(name) {
            throw ConfigurationError.unknown(
                key: name, source: "environment variable", suggestion: closest(to: name, among: Array(known)))
        }
    }

    /// Walks the file's mappings: every leaf (a scalar or a list) must be a known key; a
    /// section left empty (`disk:` with every key commented out) is fine.
    static func check(yaml text: String, file: String) throws {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError.unreadable(path: file, reason: "\(error)")
        }
        guard let root else { return }
        guard case .mapping(let mapping) = root else {
            throw ConfigurationError.unreadable(path: file, reason: "the document is not a mapping of keys")
        }
        let known = ConfigurationSpelling.all.compactMap(\.yamlKey)
        var pending: [(String, Node.Mapping)] = [("", mapping)]
        while let (prefix, mapping) = pending.popLast() {
            for (keyNode, value) in mapping {
                let key = prefix + (keyNode.string ?? "\(keyNode)")
                if case .mapping(let nested) = value {
                    pending.append((key + ".", nested))
                } else if known.contains(key) || (value.null != nil && known.contains { $0.hasPrefix(key + ".") }) {
                    continue
                } else {
                    throw ConfigurationError.unknown(
                        key: key, source: "key in \(file)", suggestion: closest(to: key, among: known))
                }
            }
        }
    }

    /// The known spelling nearest by edit distance, if it is near enough to be a likely typo
    /// rather than a different word altogether.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }) else { return nil }
        return best.1 <= max(3, word.count / 3) ? best.0 : nil
    }

    /// Levenshtein distance: insertions, deletions and substitutions each cost one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
