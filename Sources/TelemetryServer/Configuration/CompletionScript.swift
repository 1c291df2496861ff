import Foundation

/// Shell completion for `mamtelemetryd`, written from the configuration table: every key's
/// flag with its help line and, where the table knows them, the values it accepts (words,
/// files, directories). `mamtelemetryctl` gets its scripts from swift-argument-parser; the
/// daemon's options are rows of a table, not properties of an argument-parser command, so it
/// writes its own (`--generate-completion-script bash|zsh|fish`).
enum CompletionScript {
    static let shells = ["bash", "zsh", "fish"]

    /// A completable flag: the table's keys, `--config` (which chooses the file) and the
    /// flags the daemon answers itself.
    struct Option {
        var flag: String
        var help: String
        var completion: ConfigurationKey.Completion?
    }

    static var options: [Option] {
        ConfigurationKey.all.map { Option(flag: $0.spelling.flag, help: $0.help, completion: $0.completion) }
            + CommandFlag.all.map { Option(flag: $0.flag, help: $0.help, completion: $0.completion) }
    }

    static func script(for shell: String) -> String? {
        switch shell {
        case "bash": bash
        case "zsh": zsh
        case "fish": fish
        default: nil
        }
    }

    private static var bash: String {
        let cases = options.compactMap { option -> String? in
            switch option.completion {
            case .file: "        \(option.flag)) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;"
            case .directory: "        \(option.flag)) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;"
            case .words(let words):
                "        \(option.flag)) COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\")); return ;;"
            case .anything: "        \(option.flag)) return ;;"
            case nil: nil
            }
        }
        return """
            # bash completion for mamtelemetryd
            _mamtelemetryd() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                case $prev in
            \(cases.joined(separator: "\n"))
                esac
                COMPREPLY=($(compgen -W "\(options.map(\.flag).sorted().joined(separator: " "))" -- "$cur"))
            }
            complete -F _mamtelemetryd mamtelemetryd

            """
    }

    private static var zsh: String {
        let specs = options.map { option -> String in
            let help = option.help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "\\[")
                .replacingOccurrences(of: "]", with: "\\]").replacingOccurrences(of: ":", with: "\\:")
            let action: String
            switch option.completion {
            case .file: action = ":file:_files"
            case .directory: action = ":directory:_files -/"
            case .words(let words): action = ":value:(\(words.joined(separator: " ")))"
            case .anything: action = ":value: "
            case nil: action = ""
            }
            return "    '\(option.flag)[\(help)]\(action)'"
        }
        return "#compdef mamtelemetryd\n_arguments \\\n" + specs.joined(separator: " \\\n") + "\n"
    }

    private static var fish: String {
        let lines = options.map { option -> String in
            let help = option.help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
            let head = "complete -c mamtelemetryd -l \(option.flag.dropFirst(2))"
            switch option.completion {
            case .file: return "\(head) -r -F -d '\(help)'"
            case .directory: return "\(head) -r -a '(__fish_complete_directories)' -d '\(help)'"
            case .words(let words): return "\(head) -r -f -a '\(words.joined(separator: " "))' -d '\(help)'"
            case .anything: return "\(head) -r -f -d '\(help)'"
            case nil: return "\(head) -f -d '\(help)'"
            }
        }
        return "# fish completion for mamtelemetryd\n" + lines.joined(separator: "\n") + "\n"
    }
}
