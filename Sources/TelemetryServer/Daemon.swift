import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import TelemetryModel
import TelemetryStore

/// The daemon's life: load configuration, open the store, run the HTTP server and its
/// services until SIGTERM/SIGINT, then drain. Returns the process exit code.
public enum Daemon {
    public static func run(arguments: [String] = CommandLine.arguments) async -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            return 0
        }
        if arguments.contains("--version") {
            print("mamtelemetryd \(DaemonVersion.current)")
            return 0
        }
        let configuration: ServerConfiguration
        do {
            configuration = try await ConfigurationLoader.load(arguments: arguments)
        } catch {
            FileHandle.standardError.write(Data("mamtelemetryd: \(error)\n".utf8))
            return 78  // EX_CONFIG
        }
        var logger = Logger(label: "mamtelemetryd")
        logger.logLevel = Logger.Level(rawValue: configuration.logLevel) ?? .info
        do {
            let components = try DaemonComponents(configuration: configuration, logger: logger)
            let hooks = ApplicationHooks()
            let app = buildApplication(components: components, hooks: hooks, logger: logger)
            logger.notice(
                "mamtelemetryd starting",
                metadata: [
                    "listen": "\(configuration.host):\(configuration.port)",
                    "dataDir": "\(configuration.dataDirectory.path)",
                ])
            try await app.runService()
            logger.notice("mamtelemetryd stopped")
            return 0
        } catch {
            logger.critical("mamtelemetryd failed", metadata: ["error": "\(error)"])
            return 1
        }
    }

    static let usage = """
        Usage: mamtelemetryd [--data-dir DIR] [--listen HOST:PORT] [--config FILE]

        Collects MAM SDK telemetry and diagnostic logs over HTTP, stores them zlib-compressed
        and durably, mirrors logs into the systemd journal and answers queries.

          --data-dir DIR      state directory (default: $STATE_DIRECTORY, else ./data)
          --listen HOST:PORT  HTTP listen address (default: 127.0.0.1:8470)
          --config FILE       YAML configuration file (see packaging/config.yaml)
          --version           print the version and exit

        Every option also reads from MAMTELEMETRY_<KEY> environment variables
        (MAMTELEMETRY_DATA_DIR, MAMTELEMETRY_LISTEN, MAMTELEMETRY_STORE_ZLIB_LEVEL, ...).
        """
}

public enum DaemonVersion {
    public static let current = "0.1.0"
}
