import Foundation

/// A string as a dictionary key that compares and hashes its UTF-8 bytes. Swift's `String`
/// equality is canonical equivalence: "café" with a precomposed é and with e + U+0301 are
/// equal, so a string table keyed by `String` would store a record's device, app or identity
/// in another record's spelling. Queries, SQLite and ClickHouse compare bytes; so must the
/// tables that decide what is stored.
///
/// Equality compares the two byte buffers with `memcmp`: `utf8.elementsEqual` walks them one
/// byte at a time through the generic iterator, and the batch encoders (`KeysBlock`, the
/// segment's string columns) compare every string of every record this way.
struct ExactText: Hashable {
    let value: String

    init(_ value: String) { self.value = value }

    static func == (a: ExactText, b: ExactText) -> Bool {
        var x = a.value
        var y = b.value
        return x.withUTF8 { p in
            y.withUTF8 { q in p.count == q.count && (p.isEmpty || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0) }
        }
    }

    func hash(into hasher: inout Hasher) {
        var value = value
        value.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension Dictionary where Value == Int {
    /// The index stored under `key`, or `next` after storing it there: a string table's
    /// "get or assign the next index" with one hash of the key instead of two.
    mutating func indexInserting(_ key: Key, next: Int) -> Int {
        Self.read(&self[key, default: next])
    }

    private static func read(_ slot: inout Int) -> Int { slot }
}
