import Foundation
import StoreCore

/// TEST HOOK, not a setting: with `MAMTELEMETRYD_TEST_CRASH_AT=<point>` in its environment
/// (a `CommitFaultPoint` raw value: `after-staging`, `after-decision`, `between-kinds`,
/// `compaction-mid-merge`, `after-compaction`,
/// `after-clickhouse-insert`), the daemon kills itself with SIGKILL when a commit, compaction
/// or ClickHouse insert reaches that point, so a test can
/// prove that after a crash there a request is stored whole or not at all. Deliberately
/// outside the `MAMTELEMETRY_` configuration namespace; the daemon logs a warning when armed.
struct CrashAtCommitPoint: CommitFaultInjector {
    static let variable = "MAMTELEMETRYD_TEST_CRASH_AT"
    let point: CommitFaultPoint

    init?(environment: [String: String]) {
        guard let value = environment[Self.variable], let point = CommitFaultPoint(rawValue: value) else { return nil }
        self.point = point
    }

    func reached(_ point: CommitFaultPoint) {
        if point == self.point { kill(getpid(), SIGKILL) }
    }
}
