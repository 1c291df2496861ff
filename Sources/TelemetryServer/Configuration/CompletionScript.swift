/// Shell completion for `mamtelemetryd`, written from the same spellings the loader accepts,
/// so completion never offers a flag the daemon would refuse. `mamtelemetryctl` gets its
/// scripts from swift-argument-parser; the daemon reads its flags through
/// swift-configuration, so it writes its own (`--generate-completion-script bash|zsh|fish`).
enum CompletionScript {
    static let shells = ["bash", "zsh", "fish"]

    static func script(for shell: String) -> String? {
        let flags = ConfigurationSpelling.all.map(\.flag).sorted()
        let commands = ConfigurationVocabulary.commandFlags.filter { $0.hasPrefix("--") }.sorted()
        switch shell {
        case "bash":
            return """
                # bash completion for mamtelemetryd
                _mamtelemetryd() {
                    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                    case $prev in
                        --config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                        --data-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
                    esac
                    COMPREPLY=($(compgen -W "\((flags + commands).joined(separator: " "))" -- "$cur"))
                }
                complete -F _mamtelemetryd mamtelemetryd

                """
        case "zsh":
            let specs =
                flags.map { flag -> String in
                    switch flag {
                    case "--config": return "    '--config[YAML configuration file]:file:_files'"
                    case "--data-dir": return "    '--data-dir[state directory]:directory:_files -/'"
                    default: return "    '\(flag)[configuration key]:value: '"
                    }
                } + commands.map { "    '\($0)'" }
            return "#compdef mamtelemetryd\n_arguments \\\n" + specs.joined(separator: " \\\n") + "\n"
        case "fish":
            let lines =
                flags.map { flag -> String in
                    let name = flag.dropFirst(2)
                    switch flag {
                    case "--config": return "complete -c mamtelemetryd -l \(name) -r -F -d 'YAML configuration file'"
                    case "--data-dir":
                        return "complete -c mamtelemetryd -l \(name) -r -a '(__fish_complete_directories)' -d 'state directory'"
                    default: return "complete -c mamtelemetryd -l \(name) -r -f"
                    }
                } + commands.map { "complete -c mamtelemetryd -l \($0.dropFirst(2)) -f" }
            return "# fish completion for mamtelemetryd\n" + lines.joined(separator: "\n") + "\n"
        default:
            return nil
        }
    }
}
