/// One journal entry as journald's native protocol sees it: an ordered list of fields, each
/// a name and a byte value.
///
/// The fields are kept back to back as `NAME=value` items in a single byte buffer, so an
/// entry costs two allocations however many fields it has (the mirror builds one per
/// accepted log record on the ingest path) and `sd_journal_sendv` can be handed one iovec
/// per field pointing straight into the buffer, with no copy at send time.
///
/// Values are binary-safe: a value may contain newlines or any other byte, and the native
/// protocol (through `sd_journal_sendv`) carries it unchanged. Field names must follow
/// journald's rules (see ``JournalFieldName``); names built by this module always do.
public struct JournalEntry: Sendable, Hashable {
    /// Where one `NAME=value` item sits in ``bytes``.
    struct Item: Sendable, Hashable {
        var start: Int
        /// Offset of the `=` that separates name and value.
        var separator: Int
        var end: Int
    }

    /// All items, `NAME=value` each, concatenated without separators.
    private(set) var bytes: [UInt8] = []
    private(set) var items: [Item] = []

    /// An empty entry; add fields with ``append(_:_:)``.
    public init() {}

    /// An entry with the given fields, in order.
    public init(fields: [JournalField]) {
        for field in fields { append(field.name, bytes: field.value) }
    }

    /// Number of fields, duplicates included (journald allows a name to repeat).
    public var count: Int { items.count }

    /// The fields in the order they were added.
    public var fields: [JournalField] {
        items.map { item in
            JournalField(
                name: String(decoding: bytes[item.start..<item.separator], as: UTF8.self),
                value: Array(bytes[(item.separator + 1)..<item.end]))
        }
    }

    /// Adds a field with a text value (stored as UTF-8).
    public mutating func append(_ name: String, _ value: String) {
        append(name, bytes: value.utf8)
    }

    /// Adds a field with a raw byte value.
    public mutating func append<Bytes: Sequence<UInt8>>(_ name: String, bytes value: Bytes) {
        assert(JournalFieldName.isValid(name), "invalid journal field name \(name)")
        let start = bytes.count
        bytes.append(contentsOf: name.utf8)
        let separator = bytes.count
        bytes.append(UInt8(ascii: "="))
        bytes.append(contentsOf: value)
        items.append(Item(start: start, separator: separator, end: bytes.count))
    }

    /// The first value of the named field, decoded as UTF-8; `nil` when absent.
    public func value(of name: String) -> String? {
        values(of: name).first
    }

    /// Every value of the named field, in order, decoded as UTF-8.
    public func values(of name: String) -> [String] {
        let wanted = Array(name.utf8)
        return items.compactMap { item in
            guard bytes[item.start..<item.separator].elementsEqual(wanted) else { return nil }
            return String(decoding: bytes[(item.separator + 1)..<item.end], as: UTF8.self)
        }
    }

    /// Gives `body` each field as a `NAME=value` byte range, in order: the shape of one
    /// iovec of the native protocol. The pointers are valid only inside `body`.
    func withItems<R>(_ body: (UnsafeRawBufferPointer, [Item]) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { try body($0, items) }
    }
}

/// A single journal field: a name such as `MESSAGE` or `MAM_APP_ID` and its bytes.
public struct JournalField: Sendable, Hashable {
    public var name: String
    public var value: [UInt8]

    /// A field with a text value, stored as UTF-8.
    public init(name: String, value: String) {
        self.init(name: name, value: Array(value.utf8))
    }

    /// A field with a raw byte value.
    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    /// The value decoded as UTF-8, for display and tests.
    public var text: String { String(decoding: value, as: UTF8.self) }
}
