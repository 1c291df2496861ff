import StoreCore
import TelemetryModel

/// How a follow stream treats time, like `journalctl -f`: it starts with the newest matches
/// (`tail`, default 10) and then streams records in the order they arrive. Devices upload in
/// batches, so a record can arrive long after its device time: once the stream runs it
/// filters by arrival, not by the window (`since`/`until`/`around` choose the backlog only),
/// and every streamed record says how late it arrived (`arrivalDelayMs`), so a viewer can
/// mark it ("arrived 20 min late") instead of hiding it.
extension RecordQuery {
    /// The query for records arriving after the stream started: the same filters without the
    /// device-time window.
    var liveTail: RecordQuery {
        var q = self
        q.since = nil
        q.until = nil
        return q
    }
}

enum FollowBacklog {
    /// Records a follow starts with when the caller names neither `tail` nor `limit`.
    static let defaultTail = 10
    static let maxTail = 1000

    /// The backlog size: `tail` (0 to 1000: `-n 0` starts with nothing), else `limit` (what
    /// earlier clients send), else the default.
    static func size(tail: String?, limit: String?) throws -> Int {
        if let tail {
            guard let n = Int(tail), (0...maxTail).contains(n) else {
                throw APIError.badRequest("invalid_parameter", "tail must be an integer from 0 to \(maxTail), not '\(tail)'")
            }
            return n
        }
        if let limit, let n = Int(limit) { return min(n, maxTail) }
        return defaultTail
    }
}

extension RecordRendering {
    /// A streamed record: as a page shows it, with `arrivalDelayMs` first — receive time minus
    /// the device's time, never negative (a device clock ahead of ours is not "early").
    static func renderFollowed(_ r: StoredRecord) -> [UInt8] {
        let rendered = render(r)
        let (delay, overflow) = r.receivedAt.subtractingReportingOverflow(r.keys.time)
        let member = Array(#""arrivalDelayMs":"#.utf8) + Array(String(overflow ? 0 : max(0, delay)).utf8)
        return JSONSplice.prepend(member, to: rendered)
    }
}
