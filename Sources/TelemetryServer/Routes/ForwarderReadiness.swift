import ClickHouseStore
import StoreCore
import TelemetryModel

/// The `clickhouse` entry of `/readyz`. Not required: while ClickHouse is down the collector
/// keeps acknowledging into its spool, which is the point of having one; the entry says how
/// much waits and why, and ingest itself refuses (503) once the spool is at its cap.
enum ForwarderReadiness {
    static func check(_ status: ForwarderStatus, spoolMaxBytes: Int64, clock: any WallClock) -> ReadinessCheck {
        ReadinessCheck(name: "clickhouse", required: false) {
            let s = status.snapshot
            let age = s.depth.oldestReceivedAt.map { max(0, clock.nowMilliseconds() - $0) / 1000 } ?? 0
            let spool = "spool \(s.depth.records) records, \(s.depth.bytes) of \(spoolMaxBytes) bytes, oldest \(age) s"
            if s.reachable { return (true, "forwarding; \(spool)") }
            return (false, "backend unreachable (\(s.lastErrorKind ?? "error")): \(s.lastError ?? ""); \(spool)")
        }
    }
}
