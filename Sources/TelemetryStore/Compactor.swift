import Logging
import Metrics
public import ServiceLifecycle
import StoreCore
import Synchronization
import TelemetryModel

/// How the compactor cuts segments.
public struct CompactionPolicy: Sendable, Hashable {
    /// A segment holds at most this many records ...
    public var maxRecords: Int
    /// ... and this many uncompressed bytes. Larger segments share more GUIDs and keys;
    /// a query that needs one record of a segment inflates all of it.
    public var maxRawBytes: Int
    /// Rows younger than this are left alone, so followers and the newest pages read the
    /// committer's batches as they were written.
    public var minimumAgeSeconds: Int64
    /// Receive times within one segment span at most this (its receive time is its newest
    /// row's, so age retention removes its oldest records at most this much later).
    public var maxReceiveSpanSeconds: Int64
    /// Pause between passes.
    public var interval: Duration
    /// How long an open run (one that ends at the young rows, so the next batches may still
    /// join it) waits for them before it is merged as it is. Under steady load every pass
    /// ended in such a run; merged at once, the next pass merged that segment again with the
    /// batches after it, inflating and re-encoding up to a whole segment (8 MiB of text and
    /// 16,384 records' keys held at once) every two seconds. Waiting, the run fills with
    /// batches and is merged once; a trickle still reaches segments within this time.
    public var openRunWaitSeconds: Int64

    public init(
        maxRecords: Int = 16384, maxRawBytes: Int = 8 << 20, minimumAgeSeconds: Int64 = 5, maxReceiveSpanSeconds: Int64 = 3600,
        interval: Duration = .seconds(2), openRunWaitSeconds: Int64 = 30
    ) {
        self.maxRecords = maxRecords
        self.maxRawBytes = maxRawBytes
        self.minimumAgeSeconds = minimumAgeSeconds
        self.maxReceiveSpanSeconds = maxReceiveSpanSeconds
        self.interval = interval
        self.openRunWaitSeconds = openRunWaitSeconds
    }
}

/// Background merging of the group committer's small batches into large segments (see
/// ``Segment``): per environment and kind, runs of adjacent rows older than the policy's
/// minimum age are cut greedily up to its limits and each run becomes one segment in one
/// transaction. Ids, dedup entries, incidents and rollups are untouched: only the rows'
/// storage changes. A run that may still grow (it ends at the young rows) is merged only once
/// its oldest batch has waited ``CompactionPolicy/openRunWaitSeconds`` for company, and only
/// when its batches hold at least half as many records as the segments in it, so re-encoding
/// a growing segment costs a bounded multiple of its size.
public final class Compactor: Service, Sendable {
    private let databases: PerEnvironment<EnvironmentDatabase>
    private let policy: CompactionPolicy
    private let faults: any CommitFaultInjector
    private let clock: any WallClock
    private let metrics: any MetricsFactory
    private let logger: Logger
    /// Where each environment's and kind's next pass starts (the first row of the run that
    /// was still open), so a pass does not re-read rows already settled.
    private let resumeAt = Mutex<[String: Int64]>([:])
    /// Where merges are decoded and encoded: a niced thread, so a burst of ingest keeps the
    /// cores and compaction catches up after it.
    private let worker = BackgroundWorker(name: "compactor")

    init(
        databases: PerEnvironment<EnvironmentDatabase>, policy: CompactionPolicy, faults: any CommitFaultInjector, clock: any WallClock,
        metrics: any MetricsFactory, logger: Logger
    ) {
        self.databases = databases
        self.policy = policy
        self.faults = faults
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    public struct PassResult: Sendable, Hashable {
        public var segments = 0
        public var rowsMerged = 0
        public var records = 0
        public var bytesBefore = 0
        public var bytesAfter = 0
        /// The most inflated row payload one merge of the pass held at once.
        public var peakInflatedBytes = 0
    }

    /// One pass over both environments and kinds.
    @discardableResult
    public func compactOnce() async throws -> PassResult {
        var total = PassResult()
        for env in TelemetryEnvironment.allCases {
            for kind in RecordKind.allCases {
                let r = try await compact(env: env, kind: kind)
                total.segments += r.segments
                total.rowsMerged += r.rowsMerged
                total.records += r.records
                total.bytesBefore += r.bytesBefore
                total.bytesAfter += r.bytesAfter
                total.peakInflatedBytes = max(total.peakInflatedBytes, r.peakInflatedBytes)
            }
        }
        return total
    }

    private func compact(env: TelemetryEnvironment, kind: RecordKind) async throws -> PassResult {
        let compaction = databases[env].compaction
        let key = "\(env.rawValue)/\(kind.storedCode)"
        let cutoff = clock.nowMilliseconds() - policy.minimumAgeSeconds * 1000
        let openRunCutoff = cutoff - policy.openRunWaitSeconds * 1000
        let candidates = try await compaction.candidates(
            kind: kind, from: resumeAt.withLock { $0[key] ?? 0 }, receivedBefore: cutoff)
        var result = PassResult()
        var start = 0
        while start < candidates.count {
            var end = start
            var records = 0
            var raw = 0
            while end < candidates.count {
                let c = candidates[end]
                let fits =
                    end == start
                    || (records + c.count <= policy.maxRecords && raw + c.rawBytes <= policy.maxRawBytes
                        && c.receivedAt - candidates[start].receivedAt <= policy.maxReceiveSpanSeconds * 1000)
                guard fits else { break }
                records += c.count
                raw += c.rawBytes
                end += 1
            }
            let run = Array(candidates[start..<end])
            let complete = end < candidates.count
            if !complete { resumeAt.withLock { $0[key] = run[0].firstSeq } }
            start = end
            let batchRecords = run.filter { !$0.isSegment }.reduce(0) { $0 + $1.count }
            let segmentRecords = records - batchRecords
            guard batchRecords > 0 else { continue }
            if !complete {
                let waited = run.first { !$0.isSegment }.map { $0.receivedAt < openRunCutoff } ?? false
                guard waited, batchRecords * 2 >= segmentRecords else { continue }
            }
            let faults = self.faults
            guard
                let outcome = try await compaction.compact(
                    run, kind: kind, worker: worker, midMerge: { try faults.reached(.compactionMidMerge) })
            else { continue }
            try faults.reached(.afterCompaction)
            result.segments += 1
            result.rowsMerged += outcome.rowsMerged
            result.records += outcome.records
            result.bytesBefore += outcome.bytesBefore
            result.bytesAfter += outcome.bytesAfter
            result.peakInflatedBytes = max(result.peakInflatedBytes, outcome.peakInflatedBytes)
            let dimensions = [("env", env.rawValue)]
            Counter(label: MetricName.compactionSegments.rawValue, dimensions: dimensions, factory: metrics).increment()
            Counter(label: MetricName.compactionSavedBytes.rawValue, dimensions: dimensions, factory: metrics).increment(
                by: max(0, outcome.bytesBefore - outcome.bytesAfter))
        }
        return result
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully {
            // Rows kept for a query's next page that never came are let go on this beat too.
            for env in TelemetryEnvironment.allCases { databases[env].resumeBlocks.expire() }
            do {
                let r = try await compactOnce()
                if r.segments > 0 {
                    logger.debug(
                        "compacted batches into segments",
                        metadata: [
                            "segments": "\(r.segments)", "rows": "\(r.rowsMerged)", "records": "\(r.records)",
                            "bytesBefore": "\(r.bytesBefore)", "bytesAfter": "\(r.bytesAfter)",
                        ])
                }
            } catch {
                logger.error("compaction pass failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.policy.interval) }
        }
    }
}
