import Archive
import Privacy
import StoreCore
import TelemetryModel

/// The per-record work of one bundle member, done while the store visits the records
/// (`RecordStore.scan`): each record is redacted for the caller (a `pii` caller's record
/// holding nothing like a credential is only read for the values the timeline and summary
/// need, and written as stored), rendered as an NDJSON
/// line, and counted into the timeline and summary. Reading through the scan instead of
/// collected pages means a record is never copied out of its batch first, and a page of the
/// bundle is as large as a compacted segment, so no segment is decoded once per small page.
///
/// Unchecked `Sendable` because the member file (a file handle) is not: the store calls the
/// visitor from one reading thread at a time and returns only after its last call, and
/// `flush` and `finish` run only after the scan returned, so the state is never touched by
/// two threads at once.
final class BundleRecordPass: @unchecked Sendable {
    struct State {
        var redactor: RecordRedactor
        var timeline: Timeline
        var summary: BundleSummary
        var lines = RecordLineWriter(capacity: 1 << 20)
        var member: MemberFile
        /// The first failure writing the member; the scan cannot throw from its visitor, so
        /// the pass stops writing and the builder throws this once the page is read.
        var failure: (any Error)?
        var records = 0
    }

    private var s: State
    /// Records of the current read that an earlier read of the member already wrote.
    var skip: (@Sendable (RecordKeys) -> Bool)?
    private let kind: RecordKind
    private let capture: RecordRedactor.CaptureSet

    init(kind: RecordKind, redactor: RecordRedactor, timeline: Timeline, summary: BundleSummary, member: MemberFile, capture: Set<String>) {
        s = State(redactor: redactor, timeline: timeline, summary: summary, member: member)
        self.kind = kind
        self.capture = RecordRedactor.CaptureSet(capture)
    }

    func take(_ event: ScanEvent) {
        guard case .record(let record) = event else { return }
        if let skip, skip(record.keys) { return }
        do {
            guard s.failure == nil else { return }
            let shown = s.redactor.redact(json: record.json, verbose: record.keys.level == .verbose, capture: capture)
            if let json = shown.json {
                json.withUnsafeBufferPointer {
                    s.lines.append(
                        id: record.id, receivedAt: record.receivedAt, env: record.env, statusCode: record.keys.statusCode, json: $0)
                }
            } else {
                s.lines.append(record)
            }
            s.lines.append(raw: CollectionOfOne(0x0A))
            // The timeline and summary print the keys' client strings: shown as the record is.
            let keys = s.redactor.shown(record.keys)
            s.timeline.add(keys, kind: kind, captured: shown.captured)
            s.summary.add(keys, kind: kind, captured: shown.captured)
            s.records += 1
            if s.lines.count >= 1 << 20 {
                do { try s.member.append(s.lines.take()) } catch { s.failure = error }
            }
        }
    }

    /// Writes what is buffered; throws the first failure of the pass.
    func flush() throws {
        if let failure = s.failure { throw failure }
        try s.member.append(s.lines.take())
    }

    /// The redactor, timeline and summary as the pass left them.
    func finish() -> (redactor: RecordRedactor, timeline: Timeline, summary: BundleSummary) {
        (s.redactor, s.timeline, s.summary)
    }
}
