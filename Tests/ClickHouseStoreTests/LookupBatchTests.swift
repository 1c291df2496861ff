import Synchronization
import TestSupport
import Testing

@testable import ClickHouseStore

/// One lookup at a time per collector, callers merged, each answered with its own keys only.
@Suite struct LookupBatchTests {
    /// Counts the lookups a batch runs, how many ran at once, and can hold the next one.
    final class Recorder: Sendable {
        struct State {
            var running = 0
            var mostAtOnce = 0
            var runs: [(group: Int, keys: Set<Int>)] = []
            var gate: CheckedContinuation<Void, Never>?
            var holdNext = false
        }
        let state = Mutex(State())
        /// The oracle: which keys "ClickHouse" holds.
        static func stored(_ key: Int) -> Bool { key % 3 == 0 }

        func run(_ group: Int, _ keys: Set<Int>, answers: Bool = true) async -> Set<Int>? {
            let hold = state.withLock { state -> Bool in
                state.running += 1
                state.mostAtOnce = max(state.mostAtOnce, state.running)
                state.runs.append((group, keys))
                defer { state.holdNext = false }
                return state.holdNext
            }
            if hold { await withCheckedContinuation { continuation in state.withLock { $0.gate = continuation } } }
            await Task.yield()
            state.withLock { $0.running -= 1 }
            return answers ? keys.filter(Self.stored) : nil
        }

        /// Lets a held lookup answer once it is holding.
        func release() async {
            while true {
                if let gate = state.withLock({ state -> CheckedContinuation<Void, Never>? in
                    defer { state.gate = nil }
                    return state.gate
                }) {
                    gate.resume()
                    return
                }
                await Task.yield()
            }
        }
    }

    static func waitUntil(_ batch: LookupBatch<Int, Int>, waiting: Int) async {
        while batch.pending.waiting < waiting { await Task.yield() }
    }

    @Test func callersArrivingDuringALookupShareTheNextOne() async {
        let recorder = Recorder()
        recorder.state.withLock { $0.holdNext = true }
        let batch = LookupBatch<Int, Int> { await recorder.run($0, $1) }
        let first = Task { await batch.lookup(0, [0, 1, 2, 3]) }
        await Self.waitUntil(batch, waiting: 1)
        let later = (1...5).map { caller in Task { await batch.lookup(0, Set((caller * 10)..<(caller * 10 + 6))) } }
        await Self.waitUntil(batch, waiting: 6)
        await recorder.release()
        #expect(await first.value == [0, 3])
        for (index, task) in later.enumerated() {
            let keys = Set(((index + 1) * 10)..<((index + 1) * 10 + 6))
            #expect(await task.value == keys.filter(Recorder.stored))
        }
        let (runs, mostAtOnce) = recorder.state.withLock { ($0.runs, $0.mostAtOnce) }
        #expect(runs.count == 2, "the first lookup alone, then the five callers' keys in one")
        #expect(runs.last?.keys.count == 30)
        #expect(mostAtOnce == 1)
        #expect(batch.pending == (0, 0))
    }

    /// Many callers in several groups at random moments: each gets exactly its keys that are
    /// stored (the oracle), never another caller's, one lookup runs at a time, and each
    /// lookup carries one group's keys only.
    @Test(arguments: [1, 2, 3]) func generatedCallersGetTheirOwnAnswers(seed: UInt64) async {
        var generator = SeededRandom(seed: seed)
        let callers = (0..<300).map { _ in
            (group: Int(generator.next() % 3), keys: Set((0..<Int(1 + generator.next() % 40)).map { _ in Int(generator.next() % 500) }))
        }
        let recorder = Recorder()
        let batch = LookupBatch<Int, Int> { await recorder.run($0, $1) }
        let answers = await withTaskGroup(of: (Int, Set<Int>?).self) { group in
            for (index, caller) in callers.enumerated() {
                group.addTask { (index, await batch.lookup(caller.group, caller.keys)) }
            }
            var answers: [Int: Set<Int>?] = [:]
            for await (index, answer) in group { answers[index] = answer }
            return answers
        }
        for (index, caller) in callers.enumerated() {
            #expect(answers[index] == caller.keys.filter(Recorder.stored), "caller \(index)")
        }
        let (runs, mostAtOnce) = recorder.state.withLock { ($0.runs, $0.mostAtOnce) }
        #expect(mostAtOnce == 1)
        #expect(runs.count <= callers.count)
        // Every key a lookup carried belongs to a caller of that lookup's group.
        for run in runs {
            let asked = callers.filter { $0.group == run.group }.reduce(into: Set<Int>()) { $0.formUnion($1.keys) }
            #expect(run.keys.isSubset(of: asked))
        }
        #expect(batch.pending == (0, 0))
    }

    /// A caller whose deadline passed is answered nil at once, while the lookup it joined
    /// still answers the others; nothing of it stays behind.
    @Test func aCancelledCallerLeavesAndTheOthersAreAnswered() async {
        let recorder = Recorder()
        recorder.state.withLock { $0.holdNext = true }
        let batch = LookupBatch<Int, Int> { await recorder.run($0, $1) }
        let first = Task { await batch.lookup(0, [3, 4]) }
        await Self.waitUntil(batch, waiting: 1)
        let leaving = Task { await batch.lookup(0, [6]) }
        let staying = Task { await batch.lookup(0, [9, 10]) }
        await Self.waitUntil(batch, waiting: 3)
        leaving.cancel()
        #expect(await leaving.value == nil)
        // Cancelled before it ever waits: answered nil, and no id is kept for it.
        let early = Task { await batch.lookup(0, [12]) }
        early.cancel()
        #expect(await early.value == nil)
        await recorder.release()
        #expect(await first.value == [3])
        #expect(await staying.value == [9])
        #expect(recorder.state.withLock { $0.runs.last?.keys } == [9, 10], "the leaver's keys are not looked up")
        #expect(batch.pending == (0, 0))
    }

    @Test func aLookupWithoutAnswerAnswersEveryCallerNil() async {
        let recorder = Recorder()
        let batch = LookupBatch<Int, Int> { await recorder.run($0, $1, answers: false) }
        let answers = await withTaskGroup(of: Set<Int>?.self) { group in
            for caller in 0..<20 { group.addTask { await batch.lookup(caller % 2, [caller]) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 20)
        #expect(answers.allSatisfy { $0 == nil })
        #expect(batch.pending == (0, 0))
    }
}
