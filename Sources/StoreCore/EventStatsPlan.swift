/// Which parts of a stats window a store with rollups answers from which source: the whole
/// hours from hourly rollups, the whole kept minutes around them from minute rollups, and only
/// what is left — at most the sub-minute remainders at the two ends, plus any part older than
/// the kept minutes — from the records. Together the three cover the window exactly once.
public struct EventStatsPlan: Sendable, Hashable {
    /// Hour starts answered from hourly rollups.
    public var hours: Range<Int64>?
    /// Minute starts answered from minute rollups (before and after `hours`).
    public var minutes: [Range<Int64>] = []
    /// Inclusive time ranges answered from the records' keys, in ascending order.
    public var records: [ClosedRange<Int64>] = []

    public init(hours: Range<Int64>? = nil, minutes: [Range<Int64>] = [], records: [ClosedRange<Int64>] = []) {
        self.hours = hours
        self.minutes = minutes
        self.records = records
    }

    /// The plan for `since...until` read at `grain` (nil: records only), where the minute
    /// rollups are complete from `minutesFrom` (a minute start) on.
    public init(since: Int64, until: Int64, grain: EventRollupGrain?, minutesFrom: Int64) {
        self.init()
        guard let grain, since <= until else {
            self.init(records: since <= until ? [since...until] : [])
            return
        }
        var rest: [ClosedRange<Int64>] = [since...until]
        if grain == .hour, let hours = EventRollupGrain.hour.wholePeriods(since: since, until: until) {
            self.hours = hours
            rest = []
            if since < hours.lowerBound { rest.append(since...(hours.lowerBound - 1)) }
            if hours.upperBound - 1 < until { rest.append(hours.upperBound...until) }
        }
        for part in rest {
            let from = max(part.lowerBound, minutesFrom)
            guard from <= part.upperBound, let whole = EventRollupGrain.minute.wholePeriods(since: from, until: part.upperBound)
            else {
                records.append(part)
                continue
            }
            minutes.append(whole)
            if part.lowerBound < whole.lowerBound { records.append(part.lowerBound...(whole.lowerBound - 1)) }
            if whole.upperBound - 1 < part.upperBound { records.append(whole.upperBound...part.upperBound) }
        }
    }
}
