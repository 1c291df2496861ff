/// The three spellings of one configuration key. The YAML key (`retention.prod.maxBytes`)
/// is the source; the flag (`--retention-prod-max-bytes`) and the environment variable
/// (`MAMTELEMETRY_RETENTION_PROD_MAX_BYTES`) are derived from it the way swift-configuration's
/// command-line and environment providers look them up, so a key cannot be read under one
/// spelling and checked under another.
struct ConfigurationSpelling: Sendable, Equatable {
    static let environmentPrefix = "MAMTELEMETRY_"

    /// The YAML key, or nil for a key that has no place in the file (`config` names the file).
    let yamlKey: String?
    let flag: String
    let environmentVariable: String

    init(key: String, inFile: Bool = true) {
        let words = Self.words(key)
        yamlKey = inFile ? key : nil
        flag = "--" + words.joined(separator: "-")
        environmentVariable = Self.environmentPrefix + words.joined(separator: "_").uppercased()
    }

    /// Every spelling the daemon reads: the configuration table's keys plus `config`, which only
    /// chooses the file and so cannot be written in it.
    static let all: [ConfigurationSpelling] =
        ConfigurationKey.all.map { ConfigurationSpelling(key: $0.name) } + [ConfigurationSpelling(key: "config", inFile: false)]

    /// `retention.prod.maxBytes` → `retention prod max bytes`; `apps.usePPE` → `apps use ppe`
    /// (a lowercase-to-uppercase step starts a word, as in the providers' encoders).
    static func words(_ key: String) -> [String] {
        key.split(separator: ".").flatMap { component -> [String] in
            var words: [String] = []
            var current = ""
            var previousWasLower = false
            for character in component {
                if character.isUppercase, previousWasLower, !current.isEmpty {
                    words.append(current)
                    current = ""
                }
                current.append(character)
                previousWasLower = character.isLowercase
            }
            if !current.isEmpty { words.append(current) }
            return words.map { $0.lowercased() }
        }
    }
}
