import Foundation

/// `mamtelemetryd --help`, the man page's OPTIONS and the README's table of keys, written
/// from the configuration table so each lists every key with its spellings, default and
/// accepted values. The man page and README hold a copy between markers that a test keeps
/// equal to what this writes (`REGENERATE_DOCS=1` rewrites them).
enum ConfigurationManual {
    static var usage: String {
        var lines = [
            "Usage: mamtelemetryd [--config FILE] [--KEY VALUE]...",
            "",
            "Collects MAM SDK telemetry and diagnostic logs over HTTP, stores them zlib-compressed",
            "and durably, mirrors logs into the systemd journal and answers queries.",
            "",
        ]
        for command in CommandFlag.all {
            lines.append("  \(command.usage)")
            lines.append("      \(command.help)")
        }
        for group in ConfigurationKey.Group.allCases {
            lines += ["", "\(group.rawValue):"]
            for key in ConfigurationKey.all where key.group == group {
                let spelling = key.spelling
                lines.append("  \(spelling.flag) \(key.placeholder)")
                lines.append("      \(key.help)")
                lines.append(
                    "      default \(key.defaultText); accepts \(key.accepts); \(key.onReload == .applied ? "applied on reload" : "restart to change")"
                )
                lines.append("      env \(spelling.environmentVariable), YAML \(key.name)")
            }
        }
        lines += [
            "",
            "Flags win over MAMTELEMETRY_ variables, which win over the YAML file. An unknown flag,",
            "MAMTELEMETRY_ variable or YAML key, or a value out of range, stops the daemon (exit 78).",
        ]
        return lines.joined(separator: "\n")
    }

    /// The man page's option list, one `.TP` entry per key, grouped under `.SS` headings.
    static var roffOptions: String {
        var lines: [String] = []
        for group in ConfigurationKey.Group.allCases {
            lines.append(".SS \(group.rawValue)")
            for key in ConfigurationKey.all where key.group == group {
                let spelling = key.spelling
                lines += [
                    ".TP", ".BI \(roff(spelling.flag)) \" \(roff(key.placeholder))\"",
                    roff("\(key.help.prefix(1).uppercased())\(key.help.dropFirst())."),
                    roff(
                        "Default \(key.defaultText); accepts \(key.accepts); \(key.onReload == .applied ? "applied on reload" : "needs a restart")."
                    ),
                    ".br", ".RB \"Variable \" \(roff(spelling.environmentVariable)) \", YAML key \" \(roff(key.name))",
                ]
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The README's table: one row per key.
    static var markdownTable: String {
        var lines = ["| flag | env | YAML | default | accepts | on reload |", "| --- | --- | --- | --- | --- | --- |"]
        for key in ConfigurationKey.all {
            let spelling = key.spelling
            lines.append(
                "| `\(spelling.flag) \(key.placeholder)` | `\(spelling.environmentVariable)` | `\(key.name)` | \(markdown(key.defaultText)) | \(markdown(key.accepts)) | \(key.onReload == .applied ? "applied" : "restart") |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// Escapes what roff reads as commands: backslashes, hyphens meant as minus signs in
    /// flags, and a leading dot or quote.
    private static func roff(_ text: String) -> String {
        var escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }

    private static func markdown(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "<", with: "&lt;")
    }
}
