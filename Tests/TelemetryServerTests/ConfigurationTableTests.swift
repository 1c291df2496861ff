import Foundation
import Testing

@testable import TelemetryServer

/// Properties of the one configuration table, checked over every row (not over a list kept
/// beside it): each key is listed by `--help`, the man page, the README and every shell's
/// completion; each loads the same through its flag, its variable and its YAML key; the
/// reload diff names it when it changes; and a spelling outside the table is refused.
@Suite struct ConfigurationTableTests {
    static let root = ConfigurationKeyTests.documented.deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyKeyIsInTheHelpWithItsSpellingsDefaultAndRange() {
        let help = ConfigurationManual.usage
        for key in ConfigurationKey.all {
            let spelling = key.spelling
            #expect(help.contains("  \(spelling.flag) \(key.placeholder)\n      \(key.help)\n"), "\(key.name)")
            #expect(help.contains("default \(key.defaultText); accepts \(key.accepts);"), "\(key.name)")
            #expect(help.contains("env \(spelling.environmentVariable), YAML \(key.name)\n"), "\(key.name)")
        }
        for group in ConfigurationKey.Group.allCases { #expect(help.contains("\n\(group.rawValue):\n")) }
        #expect(help.contains("--config FILE") && help.contains("--generate-completion-script"))
    }

    @Test func everyKeyIsCompletedInEveryShell() throws {
        for shell in CompletionScript.shells {
            let script = try #require(CompletionScript.script(for: shell))
            for key in ConfigurationKey.all {
                let flag = key.spelling.flag
                let needle = shell == "fish" ? "-l \(flag.dropFirst(2)) " : shell == "zsh" ? "'\(flag)[" : "        \(flag)) "
                #expect(script.contains(needle), "\(shell) does not complete \(flag)")
                if case .words(let words) = key.completion, shell != "bash" {
                    #expect(script.contains(words.joined(separator: " ")), "\(shell) does not offer the values of \(flag)")
                }
            }
        }
        #expect(CompletionScript.script(for: "tcsh") == nil)
    }

    /// A YAML file with `values` (dotted key → scalar or list) nested under their sections.
    static func yaml(_ values: [String: [String]]) -> String {
        var tree: [String: Any] = [:]
        func insert(_ path: ArraySlice<String>, _ value: [String], into node: inout [String: Any]) {
            if path.count == 1 {
                node[path.first!] = value
            } else {
                var child = node[path.first!] as? [String: Any] ?? [:]
                insert(path.dropFirst(), value, into: &child)
                node[path.first!] = child
            }
        }
        for (key, value) in values { insert(key.split(separator: ".").map(String.init)[...], value, into: &tree) }
        func render(_ node: [String: Any], _ indent: String) -> String {
            node.keys.sorted().map { name in
                if let child = node[name] as? [String: Any] { return "\(indent)\(name):\n" + render(child, indent + "  ") }
                let value = node[name] as! [String]
                return "\(indent)\(name): " + (value.count > 1 ? "[\(value.joined(separator: ", "))]" : value[0]) + "\n"
            }.joined()
        }
        return render(tree, "")
    }

    /// Loads with the base file (a collector id, so `store.backend: clickhouse` is valid
    /// alone) plus what the key's source adds.
    static func load(file: [String: [String]], arguments: [String] = [], environment: [String: String] = [:]) async throws
        -> ServerConfiguration
    {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-table-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: path) }
        var values = ["collector.id": ["0"]]
        values.merge(file) { $1 }
        try yaml(values).write(to: path, atomically: true, encoding: .utf8)
        return try await ConfigurationLoader.load(
            arguments: ["mamtelemetryd", "--config", path.path] + arguments, environment: environment)
    }

    @Test func everyKeyRoundTripsThroughFlagVariableAndYAMLAndIsNamedByTheReloadDiff() async throws {
        let defaults = try await Self.load(file: [:])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-table-\(UUID().uuidString)")
        try "secret\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        for key in ConfigurationKey.all {
            let spelling = key.spelling
            #expect(!key.example.isEmpty, "\(key.name) has no example")
            let example = key.completion == .file ? [file.path] : key.example
            let byFlag = try await Self.load(file: [:], arguments: [spelling.flag] + example)
            let byVariable = try await Self.load(file: [:], environment: [spelling.environmentVariable: example.joined(separator: ",")])
            let byFile = try await Self.load(file: [key.name: example])
            #expect(key.value(byFlag) != key.value(defaults), "\(key.name) given as \(spelling.flag) was not read")
            #expect(key.value(byVariable) == key.value(byFlag), "\(key.name) as \(spelling.environmentVariable)")
            #expect(key.value(byFile) == key.value(byFlag), "\(key.name) in the YAML file")
            let changed = ConfigurationKey.changed(from: defaults, to: byFile).map(\.name)
            #expect(changed.contains(key.name), "the reload diff misses \(key.name): \(changed)")
        }
    }

    /// A name one letter away from each key's, in each of the three spellings, is refused
    /// as unknown with the key suggested.
    @Test func aSpellingOutsideTheTableIsRefused() async throws {
        for key in ConfigurationKey.all {
            let stranger = key.name + "x"
            #expect(!ConfigurationKey.all.contains { $0.name == stranger })
            let spelling = ConfigurationSpelling(key: stranger)
            let attempts: [(String, () async throws -> ServerConfiguration)] = [
                (spelling.flag, { try await Self.load(file: [:], arguments: [spelling.flag, "1"]) }),
                (spelling.environmentVariable, { try await Self.load(file: [:], environment: [spelling.environmentVariable: "1"]) }),
                (stranger, { try await Self.load(file: [stranger: ["1"]]) }),
            ]
            for (name, attempt) in attempts {
                do {
                    _ = try await attempt()
                    Issue.record("\(name) was accepted")
                } catch let ConfigurationError.unknown(unknown, _, suggestion) {
                    #expect(unknown == name && suggestion != nil, "\(name): suggested \(suggestion ?? "nothing")")
                }
            }
        }
    }

    /// The man page's OPTIONS and the README's table are the table's output, kept in the
    /// repository between markers; `REGENERATE_DOCS=1 swift test --filter ConfigurationTableTests`
    /// rewrites them.
    @Test(arguments: [
        ("packaging/man/mamtelemetryd.1", ".\\\" BEGIN options written from ConfigurationKey.all\n", ".\\\" END options\n"),
        ("README.md", "<!-- BEGIN keys written from ConfigurationKey.all -->\n", "<!-- END keys -->\n"),
    ])
    func theManPageAndREADMEListTheTable(file: String, begin: String, end: String) throws {
        let url = Self.root.appendingPathComponent(file)
        let text = try String(contentsOf: url, encoding: .utf8)
        let generated = file.hasSuffix(".1") ? ConfigurationManual.roffOptions : ConfigurationManual.markdownTable
        let start = try #require(text.range(of: begin), "\(file) has no \(begin)")
        let stop = try #require(text.range(of: end, range: start.upperBound..<text.endIndex), "\(file) has no \(end)")
        let current = String(text[start.upperBound..<stop.lowerBound])
        if ProcessInfo.processInfo.environment["REGENERATE_DOCS"] == "1", current != generated + "\n" {
            try (text[..<start.upperBound] + generated + "\n" + text[stop.lowerBound...]).write(to: url, atomically: true, encoding: .utf8)
            return
        }
        #expect(current == generated + "\n", "\(file) is stale: REGENERATE_DOCS=1 swift test --filter ConfigurationTableTests")
    }

    /// The README's prose about `systemctl reload` names the keys by pattern (`disk.*`): each
    /// key the table applies on reload matches the "applies at once" list, and each other key
    /// matches the "any other changed key" list.
    @Test func theREADMEReloadParagraphAgreesWithTheTable() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        func patterns(after start: String, before end: String) throws -> [String] {
            let from = try #require(readme.range(of: start))
            let to = try #require(readme.range(of: end, range: from.upperBound..<readme.endIndex))
            return readme[from.upperBound..<to.lowerBound].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }
            .map { String($0.element) }
        }
        func matches(_ name: String, _ patterns: [String]) -> Bool {
            patterns.contains { $0 == name || ($0.hasSuffix(".*") && name.hasPrefix($0.dropLast())) }
        }
        let applied = try patterns(after: "(SIGHUP) applies at once:", before: "(and re-reads")
        let restart = try patterns(after: "Any other changed key (", before: ") is named")
        #expect(applied.count >= 5 && restart.count >= 5)
        for key in ConfigurationKey.all {
            #expect(matches(key.name, applied) == (key.onReload == .applied), "\(key.name) in the applied list")
            if key.onReload == .needsRestart { #expect(matches(key.name, restart), "\(key.name) missing from the restart list") }
        }
    }
}
