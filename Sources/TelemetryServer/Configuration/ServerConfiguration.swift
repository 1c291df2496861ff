public import Compression
public import Foundation
public import StoreCore
public import Systemd
public import TelemetryModel
public import TelemetryStore

/// Everything the daemon can be told, with the defaults a fresh install runs with. Every
/// field has a command-line flag, an environment variable (`MAMTELEMETRY_` + the key in
/// upper snake case) and a YAML key; `ConfigurationLoader` reads them in that priority.
public struct ServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8470
    public var dataDirectory: URL = URL(fileURLWithPath: "data")
    public var configFile: String?
    public var logLevel: String = "info"

    public var store = StoreConfiguration()
    /// Where records end up: the embedded store, or ClickHouse through it as a spool.
    public var backend: StoreBackend = .sqlite
    public var clickhouse = ClickHouseBackendConfiguration()
    public var decodeLimits = DecodeLimits()
    /// Largest request body accepted as sent on the wire (compressed or not).
    public var maxBodyBytes: Int = 16 << 20
    public var inflateLimits = Inflate.Limits()

    /// Bytes of ingest bodies and their decoded records held at once; a request that does
    /// not fit waits up to `maxAdmissionWaitMilliseconds`, then gets 503 + Retry-After.
    public var maxInFlightBytes: Int = 64 << 20
    /// How long a request waits at the door for in-flight room before it is refused.
    public var maxAdmissionWaitMilliseconds: Int = 1000
    /// Records per second one token may ingest (bursts of two seconds); 0 = no limit.
    public var perTokenRecordsPerSecond: Int = 0
    /// Records waiting for the committer; past it, 503 + Retry-After.
    public var maxQueuedRecords: Int = 500_000
    /// Disk high-water mark on the data directory's filesystem; past it, 507.
    public var disk = DiskGuard.Configuration()
    public var retention = RetentionPolicy()

    public var auth = AuthConfiguration()

    /// Mirror accepted diagnostic log records into the systemd journal.
    public var journalMirror = true
    /// Lowest level mirrored (verbose mirrors everything).
    public var journalMinLevel: LogLevel = .verbose
    /// Personal data in mirrored journal entries: redacted as for a caller without `pii`
    /// (`redact`), or as sent (`include`, the operator's opt-in); credentials masked either way.
    public var journalPersonalData: JournalPersonalData = .redact

    /// How long a client told to stop sending for an opted-out app should stay quiet.
    public var killSwitchSeconds: Int = 86_400

    /// Apps the config file marks (merged with `mamtelemetryctl apps import` registrations).
    public var appsTelemetryDisabled: [String] = []
    public var appsUsePPE: [String] = []

    public init() {}

    /// Parses `HOST:PORT` (`[::1]:8470` for IPv6).
    public mutating func setListen(_ text: String) throws {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw ConfigurationError.invalid(key: "listen", value: text, expected: "HOST:PORT, e.g. 127.0.0.1:8470")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host.isEmpty ? "0.0.0.0" : host
        self.port = port
    }

    /// Config-file app lists as registry entries.
    public var configuredApps: [String: AppFlags] {
        var apps: [String: AppFlags] = [:]
        for id in appsTelemetryDisabled { apps[id, default: .unspecified].telemetryDisabled = true }
        for id in appsUsePPE { apps[id, default: .unspecified].usePPE = true }
        return apps
    }
}

public enum ConfigurationError: Error, CustomStringConvertible {
    case invalid(key: String, value: String, expected: String)
    case unreadable(path: String, reason: String)
    /// A flag, `MAMTELEMETRY_` variable or YAML key the daemon does not know.
    case unknown(key: String, source: String, suggestion: String?)

    public var description: String {
        switch self {
        case .invalid(let key, let value, let expected): "configuration '\(key)' = '\(value)' is invalid: expected \(expected)"
        case .unreadable(let path, let reason): "configuration file \(path) cannot be read: \(reason)"
        case .unknown(let key, let source, let suggestion):
            "unknown \(source) '\(key)'" + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
        }
    }
}
