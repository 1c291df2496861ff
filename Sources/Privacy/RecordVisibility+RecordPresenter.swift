public import StoreCore
public import TelemetryModel

/// The store applies a caller's visibility to the records a query returns and matches
/// `contains` against that form, so a text filter cannot find what the caller is not shown.
extension RecordVisibility: RecordPresenter {
    public func shownJSON(_ stored: UnsafeBufferPointer<UInt8>, keys: RecordKeys) -> [UInt8]? {
        shownJSON(stored, verbose: keys.level == .verbose)
    }
}
