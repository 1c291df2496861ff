import StoreCore

/// One forwarding pass's work on one environment, in commit order: spooled batches grouped
/// into inserts (consecutive batches, up to a record and a byte budget), which may complete
/// in any order, and the order the spool forgets them in, which is strictly the commit order:
/// ``retirable()`` offers only the acknowledged units at the front. So the spool always holds
/// a suffix of what was committed, and an insert that failed is retried before anything
/// after it leaves the spool. The spool's delete runs beside the inserts (it may wait for
/// SQLite's writer behind ingest's group commits): ``startRetiring()`` hands the acknowledged
/// front to one removal, and the next removal takes everything acknowledged behind it since.
///
/// Batches ClickHouse acknowledged in an earlier pass that could not retire them (an earlier
/// insert failed) are given in `alreadyAcknowledged`: they are not sent again, only retired
/// in their turn, so a retry after one failed insert of several in flight writes each row once.
struct ShipPlan {
    struct Unit {
        enum State { case waiting, inFlight, acknowledged, failed }
        var batchIDs: [Int64]
        var records: Int
        var bytes: Int
        /// The batches to send; dropped once the unit is sent.
        var batches: [SpoolBatch]
        var state: State
    }

    let maxRecords: Int
    let maxBytes: Int
    let alreadyAcknowledged: Set<Int64>
    /// Units not yet retired; `offset` is the index of `units[0]` since the pass began.
    private var units: [Unit] = []
    private var offset = 0
    /// The next unit to send, as an index since the pass began.
    private var nextToSend = 0
    /// The group still open for more batches (the next fetch may add to it).
    private var open: Unit?
    /// The units at the front handed to a removal that has not finished.
    private var retiring = 0

    init(maxRecords: Int, maxBytes: Int, alreadyAcknowledged: Set<Int64>) {
        self.maxRecords = maxRecords
        self.maxBytes = maxBytes
        self.alreadyAcknowledged = alreadyAcknowledged
    }

    /// Adds fetched batches (the oldest first, after every batch added before); `closing`:
    /// no more come this pass, so the open group is closed too.
    mutating func add(_ batches: [SpoolBatch], closing: Bool) {
        for batch in batches {
            let records = batch.keys.count
            let bytes = batch.records.reduce(0) { $0 + $1.count }
            if alreadyAcknowledged.contains(batch.batchID) {
                close()
                units.append(Unit(batchIDs: [batch.batchID], records: records, bytes: bytes, batches: [], state: .acknowledged))
                continue
            }
            if let o = open, o.records + records > maxRecords || o.bytes + bytes > maxBytes { close() }
            var unit = open ?? Unit(batchIDs: [], records: 0, bytes: 0, batches: [], state: .waiting)
            unit.batchIDs.append(batch.batchID)
            unit.records += records
            unit.bytes += bytes
            unit.batches.append(batch)
            open = unit
        }
        if closing { close() }
    }

    private mutating func close() {
        if let o = open { units.append(o) }
        open = nil
    }

    /// The next insert to send, with the index ``acknowledge(_:)`` and ``fail(_:)`` take;
    /// nil when every closed group is sent.
    mutating func nextInsert() -> (index: Int, batches: [SpoolBatch])? {
        while nextToSend - offset < units.count {
            let i = nextToSend - offset
            nextToSend += 1
            guard units[i].state == .waiting else { continue }
            units[i].state = .inFlight
            defer { units[i].batches = [] }
            return (nextToSend - 1, units[i].batches)
        }
        return nil
    }

    mutating func acknowledge(_ index: Int) { units[index - offset].state = .acknowledged }
    mutating func fail(_ index: Int) { units[index - offset].state = .failed }

    /// The batches the spool may forget now: the acknowledged units at the front, after
    /// those a removal in flight already holds.
    func retirable() -> (batchIDs: [Int64], records: Int, units: Int) {
        var ids: [Int64] = []
        var records = 0
        var count = 0
        for unit in units.dropFirst(retiring) {
            guard unit.state == .acknowledged else { break }
            ids += unit.batchIDs
            records += unit.records
            count += 1
        }
        return (ids, records, count)
    }

    /// Hands ``retirable()`` to a removal: its units are not offered again until it ends in
    /// ``retired(units:)`` or ``retiringFailed(units:)``. Nil when nothing is retirable.
    mutating func startRetiring() -> (batchIDs: [Int64], records: Int, units: Int)? {
        let r = retirable()
        guard r.units > 0 else { return nil }
        retiring += r.units
        return r
    }

    /// The first `count` units left the spool.
    mutating func retired(units count: Int) {
        units.removeFirst(count)
        offset += count
        retiring = max(0, retiring - count)
        // Units acknowledged in an earlier pass retire without being sent.
        nextToSend = max(nextToSend, offset)
    }

    /// The removal of the first `count` units failed: they stay acknowledged, and in the spool.
    mutating func retiringFailed(units count: Int) { retiring = max(0, retiring - count) }

    /// Batches ClickHouse acknowledged that have not left the spool yet (a removal in
    /// flight holds some, or they wait behind an insert still in flight or failed).
    var batchesAwaitingRemoval: Int {
        units.reduce(0) { $0 + ($1.state == .acknowledged ? $1.batchIDs.count : 0) }
    }

    /// Batches ClickHouse acknowledged that are still in the spool behind a failed insert.
    var acknowledgedNotRetired: Set<Int64> {
        Set(units.filter { $0.state == .acknowledged }.flatMap(\.batchIDs))
    }
}
