import Foundation
import Testing

@testable import TelemetryServer

/// The spellings the daemon accepts come from the one key table, match what the README
/// documents, and anything else is refused with the nearest key suggested.
@Suite struct ConfigurationVocabularyTests {
    @Test func spellingsAreDerivedFromTheYAMLKey() {
        let maxBytes = ConfigurationSpelling(key: "retention.prod.maxBytes")
        #expect(maxBytes.flag == "--retention-prod-max-bytes")
        #expect(maxBytes.environmentVariable == "MAMTELEMETRY_RETENTION_PROD_MAX_BYTES")
        let ppe = ConfigurationSpelling(key: "apps.usePPE")
        #expect(ppe.flag == "--apps-use-ppe" && ppe.environmentVariable == "MAMTELEMETRY_APPS_USE_PPE")
        #expect(ConfigurationSpelling.all.contains { $0.flag == "--config" && $0.yamlKey == nil })
    }

    /// Every flag and variable the README's configuration table names is one the daemon accepts.
    @Test func theREADMETableNamesOnlyKnownSpellings() throws {
        let readme = try String(
            contentsOf: ConfigurationKeyTests.documented.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("README.md"), encoding: .utf8)
        let flags = Set(ConfigurationSpelling.all.map(\.flag))
        let variables = Set(ConfigurationSpelling.all.map(\.environmentVariable))
        var seen = 0
        for line in readme.split(separator: "\n") where line.hasPrefix("| `--") || line.hasPrefix("| — | `MAMTELEMETRY_") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            if let flag = cells[0].split(separator: " ").first?.trimmingCharacters(in: CharacterSet(charactersIn: "`")),
                flag.hasPrefix("--")
            {
                #expect(flags.contains(flag), "README flag \(flag)")
            }
            if cells[1].hasPrefix("`MAMTELEMETRY_") {
                #expect(variables.contains(cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))))
            }
            seen += 1
        }
        #expect(seen >= 25)
    }

    @Test func unknownSpellingsAreRefusedWithTheNearestKnownOne() async throws {
        await #expect(throws: ConfigurationError.self) {
            try await ConfigurationLoader.load(arguments: ["mamtelemetryd", "--retention-prod-max-byts", "5"], environment: [:])
        }
        #expect(throws: ConfigurationError.self) { try ConfigurationVocabulary.check(environment: ["MAMTELEMETRY_LOGLEVEL": "info"]) }
        try ConfigurationVocabulary.check(environment: [
            "MAMTELEMETRY_TOKEN": "t", "MAMTELEMETRY_URL": "u", "MAMTELEMETRYD_TEST_CRASH_AT": "x",
        ])
        try ConfigurationVocabulary.check(arguments: ["mamtelemetryd", "--listen=127.0.0.1:1", "--disk-min-free-ratio", "0", "--version"])
        #expect(
            ConfigurationVocabulary.closest(to: "MAMTELEMETRY_LOGLEVEL", among: ["MAMTELEMETRY_LOG_LEVEL", "MAMTELEMETRY_LISTEN"])
                == "MAMTELEMETRY_LOG_LEVEL")
        #expect(ConfigurationVocabulary.closest(to: "--frobnicate-everything", among: ["--listen", "--data-dir"]) == nil)
        #expect(ConfigurationVocabulary.editDistance("kitten", "sitting") == 3)
        #expect(ConfigurationVocabulary.editDistance("", "abc") == 3)
    }

    @Test func yamlKeysAreCheckedAtEveryDepth() throws {
        try ConfigurationVocabulary.check(yaml: "disk:\nretention:\n  prod:\n    maxBytes: 1\napps:\n  usePPE: [a, b]\n", file: "ok.yaml")
        #expect(throws: ConfigurationError.self) { try ConfigurationVocabulary.check(yaml: "store:\n  zlibLevl: 3\n", file: "f.yaml") }
        #expect(throws: ConfigurationError.self) { try ConfigurationVocabulary.check(yaml: "listen:\n  host: x\n", file: "f.yaml") }
        #expect(throws: ConfigurationError.self) { try ConfigurationVocabulary.check(yaml: "- a\n- b\n", file: "f.yaml") }
        do {
            try ConfigurationVocabulary.check(yaml: "journal:\n  minLevle: info\n", file: "f.yaml")
            Issue.record("an unknown key was accepted")
        } catch let error as ConfigurationError {
            #expect(error.description == "unknown key in f.yaml 'journal.minLevle'; did you mean 'journal.minLevel'?")
        }
    }
}
