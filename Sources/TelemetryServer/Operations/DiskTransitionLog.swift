import Logging
import StoreCore
import Systemd

/// The daemon's log lines for the disk guard's refusal starting and ending, under the
/// `MESSAGE_ID`s the journald catalog explains (`journalctl -x` shows what to do).
struct DiskTransitionLog: Sendable {
    let logger: Logger
    let dataDirectory: String

    func record(_ transition: DiskGuard.Transition) {
        switch transition {
        case .refusing(let status, let highWater):
            logger.error(
                "storage high-water: refusing ingest until space returns",
                metadata: .messageID(
                    .storageHighWater,
                    [
                        "freeBytes": "\(status.freeBytes)", "highWaterBytes": "\(highWater)", "dataDir": "\(dataDirectory)",
                    ]))
        case .resumed(let status):
            logger.notice(
                "storage back above high-water: ingest accepted again",
                metadata: .messageID(.storageRecovered, ["freeBytes": "\(status.freeBytes)", "dataDir": "\(dataDirectory)"]))
        }
    }
}
