import Foundation
import Systemd
import Synchronization
import TelemetryStore

/// The `STATUS=` text `systemctl status` shows: what the daemon is doing right now, and
/// which changed settings wait for a restart.
final class StatusLine: Sendable {
    let commitQueue: any CommitQueue
    let disk: DiskGuard
    let mirror: JournalMirror
    private let last = Mutex<(records: Int, at: ContinuousClock.Instant)>((0, .now))
    private let restartKeys = Mutex<[String]>([])

    init(commitQueue: any CommitQueue, disk: DiskGuard, mirror: JournalMirror) {
        self.commitQueue = commitQueue
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
            let now = ContinuousClock.now
            let seconds = Double((now - l.at).components.seconds) + Double((now - l.at).components.attoseconds) / 1e18
            defer { l = (total, now) }
            return seconds > 0 ? Double(total - l.records) / seconds : 0
        }
        var parts = ["accepting \(Int(rate.rounded())) records/s", "queue \(commitQueue.queuedRecords)"]
        if disk.status.refusing { parts.append("REFUSING INGEST: disk high-water") }
        if !mirror.status.reachable { parts.append("journal unavailable") }
        let restart = needsRestart
        if !restart.isEmpty { parts.append("restart needed to apply: \(restart.joined(separator: " "))") }
        return parts.joined(separator: ", ")
    }
}
