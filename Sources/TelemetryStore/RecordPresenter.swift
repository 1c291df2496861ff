/// The form in which the asking caller is shown records (for example with personal data
/// pseudonymized). A query that carries one gets its records back in that form, and its
/// `contains` text filter is matched against that form rather than the stored bytes, so a
/// filter can never find — and so reveal — text the caller is not shown. The store knows
/// nothing of callers or scopes: it only applies what it is given.
public protocol RecordPresenter: Sendable {
    func present(_ record: StoredRecord) -> StoredRecord

    /// True when `present` returns every record exactly as stored (a caller allowed to see
    /// everything): the store then hands out the stored bytes without presenting each one.
    var showsStoredBytes: Bool { get }
}

extension RecordPresenter {
    public var showsStoredBytes: Bool { false }
}
