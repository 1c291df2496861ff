/// The order in which a run of records (one request's group, or consecutive small groups the
/// committer packs together) is stored: one run per app with many records, in order of first
/// appearance, then one mixed run of the rest. Batches are cut at run boundaries, so an app
/// with many records gets batches of its own.
///
/// Why: the most common question names an app, and a fresh batch that holds every app had to
/// be inflated whole (payload and keys block) to return the one record in six that matched.
/// A batch of one app's records carries only that app's Bloom term, so a query for another app
/// skips it without reading its blobs: the reading cost of fresh data follows the matches, as
/// ``GroupedSegment`` does for compacted rows. Records take their ids in this order, so a batch
/// still holds consecutive ids, and each app keeps its arrival order; records of different
/// apps in one commit may be numbered out of arrival order, which no reader relies on (they
/// are made visible together, and each app is a stream of its own).
struct AppBatchLayout: Sendable, Equatable {
    /// Record positions (in the run as given) in stored order.
    let order: [Int]
    /// Ranges of `order`, one per app run and the mixed run last; none empty. A single run
    /// (one app, or none with enough records) is always arrival order.
    let runs: [Range<Int>]

    /// An app with fewer records than this in the run shares the mixed batch: a batch of a few
    /// records costs its own zlib streams, Bloom filter and row for little saved reading. Lower
    /// than ``GroupedSegment/minGroupRecords`` (whose groups also pay for GUID maps): the bench
    /// generator's requests of 500 records over six apps give ~83 per app, which must still
    /// get batches of their own, and 32 records of even small events (~150 B) fill most of
    /// zlib's 32 KiB window.
    static let minAppRecords = 32

    /// The layout of records whose apps are `apps`, in arrival order.
    init(apps: [String], minAppRecords: Int = Self.minAppRecords) {
        // Each record's app as a number (in order of first appearance). A request holds a few
        // apps: the first eight are found by comparing, which costs less than hashing every
        // record's app; any beyond them by a dictionary.
        let scanned = 8
        var distinct: [String] = []
        var counts: [Int] = []
        var beyond: [String: Int] = [:]
        var slots: [Int] = []
        slots.reserveCapacity(apps.count)
        for app in apps {
            var slot = distinct.prefix(scanned).firstIndex(of: app)
            if slot == nil, distinct.count > scanned { slot = beyond[app] }
            if slot == nil {
                slot = distinct.count
                if distinct.count >= scanned { beyond[app] = distinct.count }
                distinct.append(app)
                counts.append(0)
            }
            counts[slot!] += 1
            slots.append(slot!)
        }
        let own = counts.indices.filter { counts[$0] >= minAppRecords }
        // One app, or none with enough records: arrival order, one run.
        guard own.count > 1 || (own.count == 1 && distinct.count > 1) else {
            order = Array(apps.indices)
            runs = apps.isEmpty ? [] : [0..<apps.count]
            return
        }
        // A counting sort: each big app's run starts after the runs before it, mixed last.
        var run = [Int](repeating: own.count, count: distinct.count)
        for (r, slot) in own.enumerated() { run[slot] = r }
        var sizes = own.map { counts[$0] }
        sizes.append(apps.count - sizes.reduce(0, +))
        var next: [Int] = []
        var start = 0
        var ranges: [Range<Int>] = []
        for size in sizes {
            next.append(start)
            if size > 0 { ranges.append(start..<start + size) }
            start += size
        }
        var order = [Int](repeating: 0, count: apps.count)
        for (position, slot) in slots.enumerated() {
            let r = run[slot]
            order[next[r]] = position
            next[r] += 1
        }
        self.order = order
        runs = ranges
    }
}
