public import TelemetryModel

/// The form in which the asking caller is shown records (for example with personal data
/// pseudonymized and credentials masked). A query that carries one gets its records back in
/// that form, and its `contains` text filter is matched against that form rather than the
/// stored bytes, so a filter can never find — and so reveal — text the caller is not shown.
/// The store knows nothing of callers or scopes: it only applies what it is given.
public protocol RecordPresenter: Sendable {
    /// The JSON of a stored record (`stored`, with its `keys`) as the caller is shown it, or
    /// nil when that is the stored bytes as they are (the store then hands those out without
    /// a copy).
    func shownJSON(_ stored: UnsafeBufferPointer<UInt8>, keys: RecordKeys) -> [UInt8]?
}

extension RecordPresenter {
    /// `record` as the caller is shown it.
    public func present(_ record: StoredRecord) -> StoredRecord {
        guard let json = record.json.withUnsafeBufferPointer({ shownJSON($0, keys: record.keys) }) else { return record }
        var shown = record
        shown.json = json
        return shown
    }
}
