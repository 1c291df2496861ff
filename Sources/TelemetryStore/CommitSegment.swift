import TelemetryModel

/// Records of one kind that a commit stores together, in stored order: one group whose
/// request prepared its batches, or consecutive groups too small to prepare, which the writer
/// packs into shared batches. Each is laid out by app (``AppBatchLayout``) before dedupe, so
/// ids are given in the order the batches hold the records; a prepared group's layout is the
/// one its request encoded its batches by.
struct CommitSegment {
    /// One stored record: its group and its position in the group.
    struct Member {
        var group: Int
        var index: Int
    }

    /// The records in stored order.
    var members: [Member]
    /// Ranges of `members` that batches are cut within (one app, or the mixed rest).
    var runs: [Range<Int>]
    /// The group whose prepared batches hold exactly `members`, when the segment is one.
    var prepared: Int?
    /// The batches' `receivedAt`: the last group's, as the commit packs them.
    var receivedAt: Int64

    /// The segments of `kind` in `groups`, in arrival order of their groups.
    static func segments(of kind: RecordKind, in groups: [BatchCommitter.Group]) -> [CommitSegment] {
        var result: [CommitSegment] = []
        var pending: [Member] = []
        var pendingReceivedAt: Int64 = 0
        func flush() {
            guard !pending.isEmpty else { return }
            let layout = AppBatchLayout(apps: pending.map { groups[$0.group].records[$0.index].keys.appId })
            result.append(
                CommitSegment(
                    members: layout.order.map { pending[$0] }, runs: layout.runs, prepared: nil, receivedAt: pendingReceivedAt))
            pending.removeAll()
        }
        for (g, group) in groups.enumerated() where group.kind == kind && !group.records.isEmpty {
            if let layout = group.prepared?.layout {
                flush()
                result.append(
                    CommitSegment(
                        members: layout.order.map { Member(group: g, index: $0) }, runs: layout.runs, prepared: g,
                        receivedAt: group.receivedAt))
            } else {
                pending.append(contentsOf: group.records.indices.map { Member(group: g, index: $0) })
                pendingReceivedAt = group.receivedAt
            }
        }
        flush()
        return result
    }
}
