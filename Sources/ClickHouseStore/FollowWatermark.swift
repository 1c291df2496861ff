import StoreCore
import TelemetryModel

/// What wakes `follow=true` streams on ClickHouse, where nothing is committed locally that a
/// reader could see: a poller asks ClickHouse every `interval` for the newest id at or below
/// the watermark and announces it when it grew.
///
/// The watermark trails the clock by `lag` (default 2 s): it is the last id of the newest
/// receive second that ended at least `lag` ago. Ids are ordered by receive second, so a
/// record another collector received in the same second as a visible one, but shipped a
/// moment later, still has an id above the watermark when it arrives and a follower (which
/// reads no further than the watermark, `RecordQuery.throughID`) does not step over it.
/// Followers therefore see records about `lag` to `lag + 1 s` after receipt. A record shipped
/// later than the lag (its collector could not reach ClickHouse for a while) lands below the
/// watermark: queries show it, a live follow that already passed its id does not.
struct FollowWatermark: Sendable {
    let client: ClickHouseClient
    let database: @Sendable (TelemetryEnvironment) -> String
    let clock: any WallClock
    var lag: Duration = .seconds(2)
    var interval: Duration = .milliseconds(250)
    let sleep: @Sendable (Duration) async throws -> Void

    /// Ids below this are complete at `nowMs`: every receive second before it ended `lag` ago.
    static func bound(nowMs: Int64, lagMs: Int64) -> Int64 {
        let cutoff = nowMs - lagMs
        let second = cutoff - ((cutoff % 1000) + 1000) % 1000
        return RecordID.lowerBound(receivedAtMs: second).rawValue
    }

    var lagMs: Int64 { lag.components.seconds * 1000 + lag.components.attoseconds / 1_000_000_000_000_000 }

    /// The newest id of `env` below the watermark (0 when none).
    func watermark(env: TelemetryEnvironment) async throws -> Int64 {
        let bound = Self.bound(nowMs: clock.nowMilliseconds(), lagMs: lagMs)
        let answer = try await client.execute(
            "SELECT max(id) FROM \(identifier: database(env)).records WHERE id < \(bound) FORMAT TabSeparated")
        let rows = try TabSeparatedRows(answer, columns: 1).rows
        return try rows.first.map { try TabSeparatedRows.int($0[0]) } ?? 0
    }

    /// Announces each environment's watermark when it grew, until cancelled. A failed poll
    /// (ClickHouse unreachable) is retried at the next interval: followers stay open and
    /// catch up once it answers.
    func run(_ announce: (CommitNotice) -> Void) async {
        var announced: [TelemetryEnvironment: Int64] = [:]
        while !Task.isCancelled {
            for env in TelemetryEnvironment.allCases {
                guard let mark = try? await watermark(env: env) else { continue }
                if mark > announced[env, default: 0] {
                    announced[env] = mark
                    announce(CommitNotice(env: env, kinds: [.event, .log], lastId: mark))
                }
            }
            do { try await sleep(interval) } catch { return }
        }
    }
}
