/// A string as a dictionary key that compares and hashes its UTF-8 bytes. Swift's `String`
/// equality is canonical equivalence: "café" with a precomposed é and with e + U+0301 are
/// equal, so a string table keyed by `String` would store a record's device, app or identity
/// in another record's spelling. Queries, SQLite and ClickHouse compare bytes; so must the
/// tables that decide what is stored.
struct ExactText: Hashable {
    let value: String

    init(_ value: String) { self.value = value }

    static func == (a: ExactText, b: ExactText) -> Bool { a.value.utf8.elementsEqual(b.value.utf8) }

    func hash(into hasher: inout Hasher) {
        var value = value
        value.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
