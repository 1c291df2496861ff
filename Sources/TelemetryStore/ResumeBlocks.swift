import Synchronization

/// The decoded row a query page stopped in, kept for the page after it. A page of 10,000
/// matches ends inside a segment group almost every time, and the next page starts in that
/// same group: without this, every group a page boundary falls in was inflated and decoded
/// twice (about a fifth of a paged scan's work).
///
/// Entries are keyed by what identifies the row's bytes — its id, first record id, record
/// count, stored size and level bits (a compaction or a verbose scrub changes them; record ids
/// are never reused, so a row id SQLite hands out again comes with another first id) — and by
/// the app filter the row was decoded for. Each is taken once, and dropped after `maxAge` or
/// beyond `maxBytes`, so an idle daemon does not keep them.
final class ResumeBlocks: Sendable {
    struct Key: Hashable, Sendable {
        var row: Int64
        var firstSeq: Int64
        var count: Int
        var storedBytes: Int
        var levelMask: Int
        var app: String?
    }

    private struct Entry {
        var key: Key
        var block: StoredBlock
        var lines: StoredBlock.Lines
        var bytes: Int
        var keptAt: ContinuousClock.Instant
    }

    static let maxEntries = 4
    static let maxBytes = 16 << 20
    static let maxAge: Duration = .seconds(10)

    private let entries = Mutex<[Entry]>([])

    /// The row kept under `key`, removed from the cache unless `keep` (an NDJSON page's
    /// first pass, which finds the page's cursor from the keys, looks before its second pass
    /// takes); nil when none (or too old).
    func take(_ key: Key, keep: Bool = false) -> (block: StoredBlock, lines: StoredBlock.Lines)? {
        let now = ContinuousClock.now
        return entries.withLock { list in
            list.removeAll { now - $0.keptAt > Self.maxAge }
            guard let at = list.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = keep ? list[at] : list.remove(at: at)
            return (entry.block, entry.lines)
        }
    }

    /// Keeps a decoded row for the next page, evicting the oldest entries beyond the bounds.
    func keep(_ key: Key, block: StoredBlock, lines: StoredBlock.Lines) {
        let bytes = lines.byteCount + block.keys.count * 128
        guard bytes <= Self.maxBytes else { return }
        let now = ContinuousClock.now
        entries.withLock { list in
            list.removeAll { $0.key == key || now - $0.keptAt > Self.maxAge }
            list.append(Entry(key: key, block: block, lines: lines, bytes: bytes, keptAt: now))
            while list.count > Self.maxEntries || list.reduce(0, { $0 + $1.bytes }) > Self.maxBytes { list.removeFirst() }
        }
    }

    /// Drops entries older than `maxAge` (the compactor's loop calls this, so memory held for
    /// a page that never came is released within seconds).
    func expire() {
        let now = ContinuousClock.now
        entries.withLock { $0.removeAll { now - $0.keptAt > Self.maxAge } }
    }

    var isEmpty: Bool { entries.withLock { $0.isEmpty } }
}
