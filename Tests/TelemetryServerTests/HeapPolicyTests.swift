import Foundation
import Testing

@testable import TelemetryServer

/// With the daemon's heap settings, memory a thread allocated and freed leaves the RSS: the
/// case that grew a soaking daemon by a 64 MiB arena at a time, since glibc never trimmed the
/// top of a thread's arena below the old 64 MiB threshold, not even in `malloc_trim`.
@Suite(.serialized) struct HeapPolicyTests {
    /// Anonymous resident MiB of this process, as the trim service reads it.
    static func anonymousMiB() -> Double { Double(ProcessMetrics.anonymousBytes() ?? 0) / 1_048_576 }

    @Test func memoryAThreadFreedLeavesTheRSS() async throws {
        HeapPolicy.configure(environment: [:])
        // On a thread of its own, as a request, a query page or a retention pass runs: 40
        // blocks of 1 MiB (under the mmap threshold, so from the heap), each touched, then
        // freed newest first so they coalesce at the top of their arena.
        let (grown, left) = await withCheckedContinuation { (done: CheckedContinuation<(Double, Double), Never>) in
            let thread = Thread {
                // Trimmed first: in a process that already ran other tests, freed memory still
                // resident would serve the blocks and hide their growth.
                HeapPolicy.trim()
                let before = Self.anonymousMiB()
                let blocks = (0..<40).map { _ -> UnsafeMutableRawPointer in
                    let block = malloc(1 << 20)!
                    memset(block, 1, 1 << 20)
                    return block
                }
                let full = Self.anonymousMiB()
                for block in blocks.reversed() { free(block) }
                HeapPolicy.trim()
                done.resume(returning: (full - before, Self.anonymousMiB() - before))
            }
            thread.start()
        }
        #expect(grown >= 35, "the blocks were not resident: \(grown) MiB")
        #expect(left < 8, "\(left) MiB of 40 freed stayed resident after the trim")
    }

    @Test func theServiceTrimsOnGrowthAsWellAsOnItsInterval() {
        let step = HeapPolicy.growthBeforeTrim
        let interval = Duration.seconds(10)
        #expect(
            !HeapTrimService.trimDue(anonymousBytes: 100 << 20, afterLastTrim: 100 << 20, sinceLastTrim: .seconds(1), interval: interval))
        #expect(
            HeapTrimService.trimDue(
                anonymousBytes: (100 << 20) + step, afterLastTrim: 100 << 20, sinceLastTrim: .seconds(1), interval: interval))
        #expect(
            HeapTrimService.trimDue(anonymousBytes: 100 << 20, afterLastTrim: 100 << 20, sinceLastTrim: .seconds(10), interval: interval))
        #expect(!HeapTrimService.trimDue(anonymousBytes: nil, afterLastTrim: 100 << 20, sinceLastTrim: .seconds(9), interval: interval))
    }
}
