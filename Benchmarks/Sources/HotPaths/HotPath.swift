import Foundation

/// One measured step of the ingest or read path. Every step works on the 1,000 events of one
/// `SampleRequest`, so "one operation" is always one request's worth of events (for `scan`,
/// one query over a store of 20 such requests).
public enum HotPath: String, CaseIterable, Sendable {
    /// Wire decode: NDJSON body → `DecodedRecord`s (`TelemetryEventDecoder`).
    case decode
    /// MAM flag resolution: each record's flags against the app registry's (`PrivacyDecision`).
    case flags
    /// zlib level 6 of the request's NDJSON (`Deflate`): the reference the ingest figures are
    /// compared with (the committer's own batches default to level 1 since 2026-11-25).
    case compress
    /// A durable append through `SQLiteRecordStore` (group commit, fsync) in a temporary directory.
    case commit
    /// A time range + app query over a store holding 20,000 events.
    case scan
    /// Presenting stored records to a caller without the `pii` scope (`RecordVisibility`, one
    /// per operation as the daemon makes one per request).
    case render
    /// The commit's in-memory rollup update for each event (`RollupDeltaProbe`).
    case rollup

    /// Builds the step's input once; `directory` is where a step that needs a store keeps it.
    public func prepare(in directory: URL) async throws -> any PreparedHotPath {
        switch self {
        case .decode: DecodeStep()
        case .flags: FlagsStep()
        case .compress: CompressStep()
        case .commit: try CommitStep(directory: directory)
        case .scan: try await ScanStep(directory: directory)
        case .render: try RenderStep()
        case .rollup: RollupStep()
        }
    }
}

/// A hot path with its input ready. `run` does one operation and returns how many records it
/// handled, which callers check (so a step that silently did nothing is noticed) and keep
/// alive (so the optimiser cannot drop the work).
public protocol PreparedHotPath: AnyObject {
    func run() async throws -> Int
    /// Records one operation must handle; `run` returning anything else is a broken benchmark.
    var expectedRecords: Int { get }
    /// Releases what `prepare` opened (a store's committer).
    func finish() async
}

extension PreparedHotPath {
    public func finish() async {}
}

/// A hot path that handled the wrong number of records: its measurement would mean nothing.
public struct HotPathMismatch: Error, CustomStringConvertible {
    public let path: HotPath
    public let handled: Int
    public let expected: Int
    public init(path: HotPath, handled: Int, expected: Int) {
        self.path = path
        self.handled = handled
        self.expected = expected
    }

    public var description: String { "\(path.rawValue) handled \(handled) records per operation, expected \(expected)" }
}
