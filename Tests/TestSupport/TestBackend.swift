import Foundation

/// The store every `DaemonProcess` of this test run starts on, so one API contract suite
/// covers both backends: the embedded SQLite store (the default) or ClickHouse, chosen for
/// the whole run by the environment of `swift test` (scripts/clickhouse/contract.sh sets it):
///
///     MAMTELEMETRYD_TEST_BACKEND=clickhouse
///     MAMTELEMETRYD_TEST_CLICKHOUSE_URL=http://127.0.0.1:PORT
///
/// The variables sit outside the daemon's `MAMTELEMETRY_` configuration namespace (which
/// refuses names it does not know), like the crash hook's `MAMTELEMETRYD_TEST_CRASH_AT`.
public enum TestBackend: Sendable, Equatable {
    case sqlite
    case clickhouse(URL)

    public static let backendVariable = "MAMTELEMETRYD_TEST_BACKEND"
    public static let urlVariable = "MAMTELEMETRYD_TEST_CLICKHOUSE_URL"

    /// The backend this run asked for. A run that asks for ClickHouse without saying where
    /// stops at the first daemon rather than quietly testing SQLite twice.
    public static let current: TestBackend = {
        let environment = ProcessInfo.processInfo.environment
        guard environment[backendVariable] == "clickhouse" else { return .sqlite }
        guard let text = environment[urlVariable], let url = URL(string: text), url.scheme == "http" else {
            fatalError("\(backendVariable)=clickhouse needs \(urlVariable)=http://127.0.0.1:PORT")
        }
        return .clickhouse(url)
    }()

    public var isClickHouse: Bool { if case .clickhouse = self { true } else { false } }

    /// A ClickHouse database name no other daemon of the run uses, so contract tests that
    /// share one server never see each other's records (PPE goes to `<name>_ppe`).
    public static func uniqueDatabase() -> String {
        "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
    }

    /// The daemon flags that put a daemon on this backend, writing into `database`.
    public func daemonArguments(database: String) -> [String] {
        switch self {
        case .sqlite: []
        case .clickhouse(let url):
            [
                "--store-backend", "clickhouse", "--clickhouse-url", url.absoluteString, "--clickhouse-database", database,
                "--collector-id", "1",
            ]
        }
    }
}
