import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore

/// ``ShipPlan`` over generated batches and generated completion orders: inserts complete in
/// any order and one may fail, and removals run beside them, yet the spool is told to forget
/// batches only as a prefix of the commit order, each once, no batch is sent twice, and what
/// was acknowledged behind a failure is handed to the next pass.
@Suite struct ShipPlanTests {
    static func batch(_ id: Int64, records: Int) -> SpoolBatch {
        SpoolBatch(
            env: .prod, batchID: id, kind: .event, firstSeq: id * 1000, receivedAt: 0, storedBytes: 0,
            keys: Array(repeating: RecordKeys(time: 0, appId: "a"), count: records),
            records: Array(repeating: [0x7B, 0x7D][...], count: records))
    }

    @Test func retirementIsAlwaysAPrefixOfTheCommitOrderWhateverOrderInsertsComplete() {
        var rng = SeededRandom(seed: PropertyScale.seed(0x7368_6970))
        for _ in 0..<PropertyScale.cases(300) {
            let ids = (1...Int64(1 + rng.below(40))).map { $0 }
            let sizes = Dictionary(uniqueKeysWithValues: ids.map { ($0, 1 + rng.below(30)) })
            let earlier = Set(ids.filter { _ in rng.below(8) == 0 })
            var plan = ShipPlan(maxRecords: 1 + rng.below(60), maxBytes: 1 << 20, alreadyAcknowledged: earlier)
            let window = 1 + rng.below(4)
            let failAt = rng.below(3) == 0 ? rng.below(ids.count) : nil

            var toAdd = ids[...]
            var inFlight: [(index: Int, ids: [Int64])] = []
            var sent: [Int64] = []
            var added: Set<Int64> = []
            var retired: [Int64] = []
            var failed: [Int64]?
            var launches = 0
            // The removal in flight, which completes at a random point among the inserts.
            var removal: (batchIDs: [Int64], records: Int, units: Int)?
            while true {
                if removal == nil { removal = plan.startRetiring() }
                if let r = removal { #expect(plan.retirable().batchIDs.allSatisfy { !r.batchIDs.contains($0) }) }
                while failed == nil, inFlight.count < window {
                    if let (index, batches) = plan.nextInsert() {
                        let batchIDs = batches.map(\.batchID)
                        #expect(batchIDs == Array(batchIDs.first!...batchIDs.last!), "an insert is consecutive batches")
                        #expect(batches.count == 1 || batches.reduce(0) { $0 + $1.keys.count } <= plan.maxRecords)
                        sent += batchIDs
                        inFlight.append((index, batchIDs))
                        launches += 1
                    } else if !toAdd.isEmpty {
                        let n = 1 + rng.below(toAdd.count)
                        plan.add(toAdd.prefix(n).map { Self.batch($0, records: sizes[$0]!) }, closing: n == toAdd.count)
                        added.formUnion(toAdd.prefix(n))
                        toAdd = toAdd.dropFirst(n)
                    } else {
                        break
                    }
                }
                if let r = removal, inFlight.isEmpty || rng.below(inFlight.count + 1) == 0 {
                    retired += r.batchIDs
                    plan.retired(units: r.units)
                    removal = nil
                    continue
                }
                if inFlight.isEmpty { break }
                let done = inFlight.remove(at: rng.below(inFlight.count))
                if failed == nil, let failAt, launches > failAt {
                    failed = done.ids
                    plan.fail(done.index)
                } else {
                    plan.acknowledge(done.index)
                }
            }
            #expect(retired == Array(ids.prefix(retired.count)), "the spool forgets a prefix, in order")
            #expect(Set(sent).isDisjoint(with: earlier), "what ClickHouse acknowledged earlier is not sent again")
            #expect(sent.count == Set(sent).count, "no batch is sent twice in a pass")
            if let failed {
                #expect(!retired.contains(failed[0]))
                let acknowledged = Set(sent).subtracting(failed).union(earlier.intersection(added))
                #expect(plan.acknowledgedNotRetired == acknowledged.subtracting(retired))
            } else {
                #expect(retired == ids, "with no failure, everything leaves the spool")
                #expect(plan.acknowledgedNotRetired.isEmpty)
            }
        }
    }
}
