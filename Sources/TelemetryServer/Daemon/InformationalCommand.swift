import Foundation

/// The arguments that print something and exit without starting the daemon (`--help`,
/// `--version`, `--generate-completion-script SHELL`): checked before the configuration is
/// loaded, so they work whatever else the command line or the configuration file holds.
enum InformationalCommand {
    case help
    case version
    case completionScript(shell: String)

    init?(arguments: [String]) {
        if arguments.contains("--help") || arguments.contains("-h") {
            self = .help
        } else if arguments.contains("--version") {
            self = .version
        } else if let flag = arguments.firstIndex(of: "--generate-completion-script") {
            self = .completionScript(shell: arguments.indices.contains(flag + 1) ? arguments[flag + 1] : "")
        } else {
            return nil
        }
    }

    /// Prints what was asked for; returns the exit code.
    func perform() -> Int32 {
        switch self {
        case .help:
            print(ConfigurationManual.usage)
        case .version:
            print("mamtelemetryd \(DaemonVersion.current)")
        case .completionScript(let shell):
            guard let script = CompletionScript.script(for: shell) else {
                FileHandle.standardError.write(
                    Data("mamtelemetryd: --generate-completion-script takes \(CompletionScript.shells.joined(separator: ", "))\n".utf8))
                return ExitCode.usage
            }
            print(script, terminator: "")
        }
        return 0
    }
}

/// The sysexits.h codes the daemon exits with besides 0 and 1 (a store or key error carries
/// its own).
enum ExitCode {
    static let usage: Int32 = 64  // EX_USAGE
    static let configuration: Int32 = 78  // EX_CONFIG
}
