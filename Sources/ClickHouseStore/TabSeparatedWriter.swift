import StoreCore

/// Writes rows in ClickHouse's `TabSeparated` input format straight into an insert body:
/// fields end with a tab, rows with a newline, NULL is `\N`, and inside a string every byte
/// that would end a field or start an escape (tab, newline, backslash) is escaped, and
/// carriage return and NUL too, so the body holds no raw control byte a reader could trip on
/// (``TabSeparatedRows`` undoes all five). Every other byte passes unchanged, invalid UTF-8
/// included: a `String` column holds bytes, and `raw` keeps a record exactly as received.
struct TabSeparatedWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(bytes: $0) }
    }

    mutating func string(bytes field: ArraySlice<UInt8>) {
        field.withUnsafeBufferPointer { string(bytes: $0) }
    }

    /// Copies the runs between escaped bytes in one append each: a JSON record usually has
    /// no byte to escape at all, or a few backslashes.
    mutating func string(bytes field: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for i in 0..<field.count {
            let escaped: UInt8
            switch field[i] {
            case UInt8(ascii: "\\"): escaped = UInt8(ascii: "\\")
            case 0x09: escaped = UInt8(ascii: "t")
            case 0x0A: escaped = UInt8(ascii: "n")
            case 0x0D: escaped = UInt8(ascii: "r")
            case 0x00: escaped = UInt8(ascii: "0")
            default: continue
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: field[runStart..<i]))
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(escaped)
            runStart = i + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: field[runStart..<field.count]))
        bytes.append(0x09)
    }

    mutating func int(_ value: Int64) {
        DecimalText.append(value, to: &bytes)
        bytes.append(0x09)
    }

    /// A value whose text needs no escaping: an enum's name, a number's literal.
    mutating func plain(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(0x09)
    }

    mutating func plain(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        bytes.append(0x09)
    }

    mutating func null() {
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(UInt8(ascii: "N"))
        bytes.append(0x09)
    }

    /// Ends the row: its last field's tab becomes the newline.
    mutating func endRow() {
        precondition(bytes.last == 0x09, "a row needs at least one field")
        bytes[bytes.count - 1] = 0x0A
    }
}
