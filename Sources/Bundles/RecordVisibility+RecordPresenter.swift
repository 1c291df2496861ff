import Privacy
import TelemetryStore

/// The store applies a caller's visibility to the records a query returns and matches
/// `contains` against that form, so a text filter cannot find what the caller is not shown.
extension RecordVisibility: RecordPresenter {
    public func present(_ record: StoredRecord) -> StoredRecord {
        guard !piiAllowed else { return record }
        var shown = record
        shown.json = present(json: record.json, verbose: record.keys.level == .verbose)
        return shown
    }

    public var showsStoredBytes: Bool { piiAllowed }
}
