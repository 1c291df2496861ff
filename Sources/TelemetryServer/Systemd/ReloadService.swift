import Foundation
import Journal
import Logging
import ServiceLifecycle
import UnixSignals
import TelemetryStore

/// SIGHUP (`systemctl reload`): re-reads the configuration file, the token table and the
/// app registry without dropping a connection. A configuration that fails to load is
/// refused with a clear log line and the one in force stays. Settings that only take effect
/// at start (listen address, data directory, store tuning, limits) are reported as such.
struct ReloadService: Service {
    let arguments: [String]
    let components: DaemonComponents
    let mirror: JournalMirror
    let notifier: SystemdNotifier
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            await reload()
        }
    }

    func reload() async {
        _ = notifier.reloading()
        defer { _ = notifier.ready() }
        let fresh: ServerConfiguration
        do {
            fresh = try await ConfigurationLoader.load(arguments: arguments)
        } catch {
            logger.error(
                "reload refused: the configuration in force is kept",
                metadata: .messageID(.configReloaded, ["error": "\(error)", "result": "refused"]))
            return
        }
        components.registry.setConfigured(fresh.configuredApps)
        mirror.apply(JournalMirrorConfiguration(fresh))
        do {
            try components.tokens.reload()
        } catch {
            logger.error("reload: the token table could not be re-read", metadata: ["error": "\(error)"])
        }
        let old = components.configuration
        var restartOnly: [String] = []
        if old.host != fresh.host || old.port != fresh.port { restartOnly.append("listen") }
        if old.dataDirectory != fresh.dataDirectory { restartOnly.append("dataDir") }
        if old.store != fresh.store { restartOnly.append("store") }
        if old.decodeLimits != fresh.decodeLimits || old.maxBodyBytes != fresh.maxBodyBytes { restartOnly.append("limits") }
        logger.notice(
            "configuration reloaded",
            metadata: .messageID(.configReloaded, [
                "result": "applied", "applied": "apps, tokens, journal",
                "needsRestart": "\(restartOnly.joined(separator: ","))",
            ]))
    }
}
