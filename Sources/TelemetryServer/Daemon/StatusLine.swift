import ClickHouseStore
import Foundation
import StoreCore
import Synchronization
import Systemd
import TelemetryModel
import TelemetryStore

/// The `STATUS=` text `systemctl status` shows: what the daemon is doing right now, and
/// which changed settings wait for a restart.
final class StatusLine: Sendable {
    let commitQueue: any CommitQueue
    let disk: DiskGuard
    let mirror: JournalMirror
    /// The ClickHouse forwarder's state, when records are forwarded.
    let forwarder: ForwarderStatus?
    private let clock: any WallClock
    private let last: Mutex<(records: Int, at: ContinuousClock.Instant)>
    private let restartKeys = Mutex<[String]>([])

    init(commitQueue: any CommitQueue, disk: DiskGuard, mirror: JournalMirror, clock: any WallClock, forwarder: ForwarderStatus? = nil) {
        self.forwarder = forwarder
        self.commitQueue = commitQueue
        self.clock = clock
        last = Mutex((0, clock.monotonicNow()))
        self.disk = disk
        self.mirror = mirror
    }

    /// Configuration keys changed by a reload that apply only at the next start.
    var needsRestart: [String] {
        get { restartKeys.withLock { $0 } }
        set { restartKeys.withLock { $0 = newValue } }
    }

    func text() -> String {
        let total = commitQueue.committedRecords
        let rate = last.withLock { l -> Double in
            let now = clock.monotonicNow()
            let seconds = now.seconds(since: l.at)
            defer { l = (total, now) }
            return seconds > 0 ? Double(total - l.records) / seconds : 0
        }
        var parts = ["accepting \(Int(rate.rounded())) records/s", "queue \(commitQueue.queuedRecords)"]
        if disk.status.refusing { parts.append("REFUSING INGEST: disk high-water") }
        if !mirror.status.reachable { parts.append("journal unavailable") }
        if let f = forwarder?.snapshot, !f.reachable {
            parts.append("CLICKHOUSE UNREACHABLE (\(f.lastErrorKind ?? "error")): spooling, \(f.depth.records) records waiting")
        }
        let restart = needsRestart
        if !restart.isEmpty { parts.append("restart needed to apply: \(restart.joined(separator: " "))") }
        return parts.joined(separator: ", ")
    }
}
