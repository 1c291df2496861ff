import Foundation
import TelemetryStore

/// `mamtelemetryd --store-layout`: prints what the embedded store under the configured data
/// directory holds (``StoreLayout``) as JSON and exits, without starting the daemon. The
/// configuration is loaded as for a start (file, variables, flags), so it reads the store the
/// service would open; the files are opened read-only, so it may run beside the service.
struct StoreLayoutCommand {
    static let flag = "--store-layout"
    /// The command line without the flag: the rest configures which store to read.
    let configurationArguments: [String]

    init?(arguments: [String]) {
        guard arguments.contains(Self.flag) else { return nil }
        configurationArguments = arguments.filter { $0 != Self.flag }
    }

    /// Prints the layout; returns the exit code.
    func perform() async -> Int32 {
        guard let configuration = await Daemon.loadConfiguration(arguments: configurationArguments) else {
            return ExitCode.configuration
        }
        guard configuration.backend == .sqlite else {
            Self.fail("\(Self.flag) reads the embedded store; this configuration stores in ClickHouse")
            return ExitCode.usage
        }
        do {
            let layout = try StoreLayout.read(dataDirectory: configuration.dataDirectory)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(layout), as: UTF8.self))
            return 0
        } catch {
            Self.fail("cannot read the store under \(configuration.dataDirectory.path): \(error)")
            return 1
        }
    }

    private static func fail(_ message: String) {
        FileHandle.standardError.write(Data("mamtelemetryd: \(message)\n".utf8))
    }
}
