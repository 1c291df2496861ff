import Foundation
import Testing

@testable import TelemetryServer

/// A reload reports every changed key as applied or as needing a restart, so the key table
/// must know every key the daemon reads.
@Suite struct ConfigurationKeyTests {
    static let documented = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging/config.yaml")

    /// The leaf keys of the documented config file (two-space indentation, `# key:` lines
    /// count too: they document a key left at its default).
    static func yamlKeys() throws -> Set<String> {
        var path: [String] = []
        var keys = Set<String>()
        for raw in try String(contentsOf: documented, encoding: .utf8).split(separator: "\n") {
            var line = Substring(raw)
            let indent = line.prefix { $0 == " " }.count / 2
            line = line.drop { $0 == " " }
            if line.hasPrefix("# "), let colon = line.firstIndex(of: ":"), line.dropFirst(2)[..<colon].allSatisfy(\.isLetter) {
                line = line.dropFirst(2)  // a documented key left at its default
            } else if line.hasPrefix("#") || line.isEmpty {
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = String(line[..<colon])
            guard key.allSatisfy({ $0.isLetter }) else { continue }
            path = Array(path.prefix(indent)) + [key]
            if !line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces).isEmpty {
                keys.insert(path.joined(separator: "."))
            }
        }
        return keys
    }

    @Test func everyDocumentedKeyIsClassifiedForReload() throws {
        let documented = try Self.yamlKeys()
        let known = Set(ConfigurationKey.all.map(\.name))
        #expect(documented.contains("disk.keepFreeBytes") && documented.contains("retention.ppe.maxBytes"))
        #expect(documented == known, "undocumented: \(known.subtracting(documented)), unclassified: \(documented.subtracting(known))")
    }

    @Test func changedKeysAreNamedByTheirYAMLKey() async throws {
        let defaults = try await ConfigurationLoader.load(arguments: ["mamtelemetryd"], environment: [:])
        let changed = try await ConfigurationLoader.load(
            arguments: ["mamtelemetryd", "--store-zlib-level", "3", "--retention-ppe-logs-days", "9", "--disk-keep-free-bytes", "0"],
            environment: [:])
        let keys = ConfigurationKey.changed(from: defaults, to: changed)
        #expect(keys.map(\.name).sorted() == ["disk.keepFreeBytes", "retention.ppe.logsDays", "store.zlibLevel"])
        #expect(keys.filter { $0.onReload == .needsRestart }.map(\.name) == ["store.zlibLevel"])
    }

    /// The rollups' age is a key like the others: 400 days unless told, 0 for forever.
    @Test func rollupDaysReachThePolicy() async throws {
        let defaults = try await ConfigurationLoader.load(arguments: ["mamtelemetryd"], environment: [:])
        #expect(defaults.retention.prod.rollupsMaxAge == 400 * 86_400 && defaults.retention.ppe.rollupsMaxAge == 400 * 86_400)
        let c = try await ConfigurationLoader.load(
            arguments: ["mamtelemetryd", "--retention-prod-rollups-days", "30.5"],
            environment: ["MAMTELEMETRY_RETENTION_PPE_ROLLUPS_DAYS": "0"])
        #expect(c.retention.prod.rollupsMaxAge == 2_635_200)
        #expect(c.retention.ppe.rollupsMaxAge == nil, "0 keeps them forever")
        #expect(
            ConfigurationKey.changed(from: defaults, to: c).map(\.name).sorted() == [
                "retention.ppe.rollupsDays", "retention.prod.rollupsDays",
            ])
    }

    @Test func retentionDaysTakeFractionsAndThePassIntervalIsApplied() async throws {
        let c = try await ConfigurationLoader.load(
            arguments: ["mamtelemetryd", "--retention-prod-verbose-logs-days", "0.25", "--retention-interval-seconds", "20"],
            environment: ["MAMTELEMETRY_RETENTION_PPE_LOGS_DAYS": "1.5"])
        #expect(c.retention.prod.verboseLogsMaxAge == 21_600)
        #expect(c.retention.ppe.logsMaxAge == 129_600)
        #expect(c.retention.prod.eventsMaxAge == Int64(30 * 86_400), "whole days as before")
        #expect(c.retention.passIntervalSeconds == 20)
        let defaults = try await ConfigurationLoader.load(arguments: ["mamtelemetryd"], environment: [:])
        #expect(ConfigurationKey.changed(from: defaults, to: c).allSatisfy { $0.onReload == .applied })
        await #expect(throws: ConfigurationError.self) {
            try await ConfigurationLoader.load(arguments: ["mamtelemetryd", "--retention-prod-logs-days", "-1"], environment: [:])
        }
    }
}
